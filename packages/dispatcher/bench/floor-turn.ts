// The floor of a chat turn on this disk, for the bench (issue 19 asks for a write path "near the physical limit"):
// what Python OpenProgram reads of a turn and one git commit, written with the fewest system calls that keep the
// store's durability, and nothing else. Per turn: the user's node and meta.json made durable together before the
// model is asked, then the reply's node and meta.json; then one commit as `git add -A && git commit` leaves it
// (three blobs, two trees and the commit as loose objects, the index, the branch ref; not fsynced, as git does not
// fsync them and the store does not either). A new session is its folder with history/, meta.json and a git
// repository (HEAD, config, objects/, refs/heads/), built hidden, flushed and renamed into place.
//
// Left out, because they are the store's own protocol rather than what a turn must write: the turn lease, the
// session lock, the journal, usage.json, the reply's running node written before the model answers, the
// registry, every safety check (symlinks, sizes, a file torn in place), `context/`, `workdir/` and the session's
// "session init" commit. The bench prints the store's figures beside these, so the distance to the floor is
// what those cost.
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  fsync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  rename,
  renameSync,
  writeSync,
  type BigIntStats,
} from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";

/** A session the floor writes: its folders and what a commit needs of the last one (as git's index would hold). */
interface FloorSession {
  id: string;
  dir: string;
  history: string;
  git: string;
  nextSeq: number;
  head: string | null;
  /** Index entries by path, sorted when written. */
  entries: Map<string, IndexEntry>;
  /** Blob ids of history/'s files, by name (the history tree). */
  nodes: Map<string, string>;
  fanOuts: Set<string>;
}

interface IndexEntry {
  path: string;
  id: string;
  stat: BigIntStats;
}

const IDENTITY = "OpenProgram <openprogram@localhost>";

function hex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

function flush(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(fd, (error) => (error ? reject(error) : resolve())));
}

function renameOnPool(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => rename(from, to, (error) => (error ? reject(error) : resolve())));
}

async function flushPath(path: string): Promise<void> {
  const fd = openSync(path, "r");
  try {
    await flush(fd);
  } finally {
    closeSync(fd);
  }
}

/** Files written as the store writes them: temp files, flushed together, renamed, their folders flushed together. */
async function writeDurably(files: ReadonlyArray<{ path: string; folder: string; data: Buffer }>): Promise<void> {
  const staged = files.map((file) => {
    const temporary = join(file.folder, `.${hex(4)}.tmp`);
    const fd = openSync(temporary, "wx", 0o600);
    writeSync(fd, file.data);
    return { ...file, temporary, fd };
  });
  await Promise.all(staged.map((file) => flush(file.fd)));
  for (const file of staged) closeSync(file.fd);
  for (const file of staged) await renameOnPool(file.temporary, file.path);
  await Promise.all([...new Set(files.map((file) => file.folder))].map(flushPath));
}

function objectId(type: string, content: Buffer): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** One loose object as git writes it: a temp file in its fan-out folder, renamed to its id. */
function writeObject(session: FloorSession, type: string, content: Buffer): string {
  const id = objectId(type, content);
  const fanOut = id.slice(0, 2);
  const folder = join(session.git, "objects", fanOut);
  if (!session.fanOuts.has(fanOut)) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    session.fanOuts.add(fanOut);
  }
  const temporary = join(folder, `tmp_obj_${hex(4)}`);
  const fd = openSync(temporary, "wx", 0o400);
  writeSync(fd, deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 }));
  closeSync(fd);
  renameSync(temporary, join(folder, id.slice(2)));
  return id;
}

/** A tree object's content: `<mode> <name>\0<id>` per entry, in git's order (a folder sorts as `name/`). */
function treeContent(entries: ReadonlyArray<{ mode: string; name: string; id: string }>): Buffer {
  const key = (entry: { mode: string; name: string }): string =>
    entry.mode === "40000" ? `${entry.name}/` : entry.name;
  const sorted = [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  return Buffer.concat(
    sorted.flatMap((entry) => [Buffer.from(`${entry.mode} ${entry.name}\0`), Buffer.from(entry.id, "hex")]),
  );
}

/** `.git/index` version 2 for `entries`, as git writes it (stat data, id, flags, path padded to 8 bytes, checksum). */
function indexBytes(entries: readonly IndexEntry[]): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write("DIRC", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  parts.push(header);
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const { path, id, stat } of sorted) {
    const name = Buffer.from(path, "utf8");
    const length = 62 + name.length;
    const entry = Buffer.alloc(length + (8 - (length % 8)));
    const nanos = (ns: bigint): number => Number(ns % 1_000_000_000n);
    const seconds = (ns: bigint): number => Number(ns / 1_000_000_000n) >>> 0;
    entry.writeUInt32BE(seconds(stat.ctimeNs), 0);
    entry.writeUInt32BE(nanos(stat.ctimeNs), 4);
    entry.writeUInt32BE(seconds(stat.mtimeNs), 8);
    entry.writeUInt32BE(nanos(stat.mtimeNs), 12);
    entry.writeUInt32BE(Number(BigInt.asUintN(32, stat.dev)), 16);
    entry.writeUInt32BE(Number(BigInt.asUintN(32, stat.ino)), 20);
    entry.writeUInt32BE(0o100644, 24);
    entry.writeUInt32BE(Number(stat.uid), 28);
    entry.writeUInt32BE(Number(stat.gid), 32);
    entry.writeUInt32BE(Number(BigInt.asUintN(32, stat.size)), 36);
    Buffer.from(id, "hex").copy(entry, 40);
    entry.writeUInt16BE(Math.min(name.length, 0xfff), 60);
    name.copy(entry, 62);
    parts.push(entry);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}

/** The floor's store: sessions under `root`, in Python OpenProgram's layout. */
export class FloorStore {
  private readonly sessions = new Map<string, FloorSession>();

  constructor(private readonly root: string) {
    mkdirSync(root, { recursive: true, mode: 0o700 });
  }

  /** A new session, durable: built in a hidden folder, flushed, renamed into place, the root flushed. */
  async create(): Promise<string> {
    const id = `session_${hex(5)}`;
    const building = join(this.root, `.new-${id}`);
    for (const folder of ["", "history", ".git", ".git/objects", ".git/refs", ".git/refs/heads"])
      mkdirSync(join(building, folder), { mode: 0o700 });
    for (const [name, text] of [
      [".git/HEAD", "ref: refs/heads/main\n"],
      [".git/config", "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"],
    ] as const) {
      const fd = openSync(join(building, name), "wx", 0o600);
      writeSync(fd, text);
      closeSync(fd);
    }
    const metaFd = openSync(join(building, "meta.json"), "wx", 0o600);
    writeSync(metaFd, this.metaText(id, null));
    await Promise.all([flush(metaFd), flushPath(building)]);
    closeSync(metaFd);
    const dir = join(this.root, id);
    await renameOnPool(building, dir);
    await flushPath(this.root);
    this.sessions.set(id, {
      id,
      dir,
      history: join(dir, "history"),
      git: join(dir, ".git"),
      nextSeq: 0,
      head: null,
      entries: new Map(),
      nodes: new Map(),
      fanOuts: new Set(),
    });
    return id;
  }

  /**
   * Checks that what the floor wrote is what it claims to be, so that it is never cheaper by being wrong: in up
   * to `sample` sessions, `git fsck --strict` passes, `git status` is clean and there is one commit per turn.
   * Returns the problems found (none: an empty list).
   */
  verify(sample: number): string[] {
    const problems: string[] = [];
    for (const session of [...this.sessions.values()].slice(0, sample)) {
      const git = (...args: string[]): string =>
        execFileSync("git", ["-c", "safe.directory=*", ...args], { cwd: session.dir, encoding: "utf8" });
      try {
        git("fsck", "--strict", "--no-dangling");
        const status = git("status", "--porcelain");
        if (status !== "") problems.push(`${session.id}: git status is not clean: ${status.slice(0, 200)}`);
        const commits = Number(git("rev-list", "--count", "HEAD").trim());
        if (commits * 2 !== session.nextSeq)
          problems.push(`${session.id}: ${commits} commits for ${session.nextSeq / 2} turns`);
      } catch (error) {
        problems.push(`${session.id}: ${(error as Error).message.slice(0, 300)}`);
      }
    }
    return problems;
  }

  /** One chat turn in `sessionId`: the two durable appends, then the commit. */
  async chatTurn(sessionId: string, message: string, reply: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) throw new Error(`floor: no session ${sessionId}`);
    const user = await this.append(session, "user", message);
    const answer = await this.append(session, "llm", reply);
    await this.commit(session, [user, answer, "meta.json"]);
  }

  private metaText(id: string, head: string | null): string {
    const now = Date.now() / 1000;
    return JSON.stringify({
      id,
      agent_id: "main",
      title: "",
      source: "bench",
      created_at: now,
      updated_at: now,
      head_id: head,
    });
  }

  /** A node and the meta.json naming it as head, durable together. Returns the node's path in the session. */
  private async append(session: FloorSession, role: "user" | "llm", text: string): Promise<string> {
    const nodeId = hex(6);
    const seq = session.nextSeq++;
    const name = `${String(seq).padStart(4, "0")}-${role === "user" ? "u" : "l"}-${nodeId}.json`;
    const node = JSON.stringify({
      id: nodeId,
      created_at: Date.now() / 1000,
      role,
      name: role === "user" ? "user" : "chat",
      content: text,
      output: text,
      seq,
      metadata: { status: "done", source: "bench" },
    });
    await writeDurably([
      { path: join(session.history, name), folder: session.history, data: Buffer.from(node) },
      {
        path: join(session.dir, "meta.json"),
        folder: session.dir,
        data: Buffer.from(this.metaText(session.id, nodeId)),
      },
    ]);
    return `history/${name}`;
  }

  /** `git add -A && git commit` of the files this turn changed (the floor knows them; git would stat the rest). */
  private async commit(session: FloorSession, changed: readonly string[]): Promise<void> {
    const lock = join(session.git, "index.lock");
    const lockFd = openSync(lock, "wx", 0o600);
    for (const path of changed) {
      const absolute = join(session.dir, path);
      const stat = lstatSync(absolute, { bigint: true });
      // Read back as `git add` does (the store's commit reads it too), though the floor wrote it a moment ago.
      const content = readFileSync(absolute);
      const id = writeObject(session, "blob", content);
      session.entries.set(path, { path, id, stat });
      if (path.startsWith("history/")) session.nodes.set(path.slice("history/".length), id);
    }
    const historyTree = writeObject(
      session,
      "tree",
      treeContent([...session.nodes].map(([name, id]) => ({ mode: "100644", name, id }))),
    );
    const metaId = session.entries.get("meta.json")?.id as string;
    const root = writeObject(
      session,
      "tree",
      treeContent([
        { mode: "100644", name: "meta.json", id: metaId },
        { mode: "40000", name: "history", id: historyTree },
      ]),
    );
    const seconds = Math.floor(Date.now() / 1000);
    const body = [`tree ${root}`, ...(session.head ? [`parent ${session.head}`] : [])];
    body.push(`author ${IDENTITY} ${seconds} +0000`, `committer ${IDENTITY} ${seconds} +0000`, "", "turn", "");
    const commit = writeObject(session, "commit", Buffer.from(body.join("\n")));
    writeSync(lockFd, indexBytes([...session.entries.values()]));
    closeSync(lockFd);
    // The index and the ref replace files: renamed on the thread pool, as the store does (see renameOffThread).
    await renameOnPool(lock, join(session.git, "index"));
    const refLock = join(session.git, "refs", "heads", "main.lock");
    const refFd = openSync(refLock, "wx", 0o600);
    writeSync(refFd, `${commit}\n`);
    closeSync(refFd);
    await renameOnPool(refLock, join(session.git, "refs", "heads", "main"));
    session.head = commit;
  }
}
