import { closeSync, existsSync, lstatSync, readlinkSync, unlinkSync, writeFileSync, type BigIntStats } from "node:fs";
import { dirname, join } from "node:path";
import { createOffThread, renameOffThread } from "../atomic-file.js";
import { UnsafeSessionPathError } from "../../errors.js";
import { fileKind, readRegularFile, readRegularFileOrNull } from "../safe-open.js";
import { assertRealDirectories } from "../safe-paths.js";
import { parseNodeText } from "../history.js";
import { GIT_EXCLUDES, parseNodeFileName, type SessionPaths } from "../layout.js";
import {
  comparePaths,
  entryFromStat,
  parseIndex,
  serializeIndex,
  statMatches,
  UnsupportedIndexError,
  type IndexEntry,
} from "./git-index.js";
import {
  hashObject,
  hasLooseObject,
  readLooseObject,
  type GitObjectType,
  type PendingObject,
} from "./loose-objects.js";
import {
  createPackTemps,
  discardPackTemps,
  packEntry,
  readdirOrEmpty,
  readPackedObject,
  writePack,
} from "./pack-file.js";
import { listPacks, mergeSmallPacks, PACKS_BEFORE_MERGE } from "./pack-merge.js";
import { lockRef, readHead } from "./refs.js";
import { writeTrees } from "./tree-builder.js";
import { scanHistoryFiles, scanWorktree, type WorktreeFile } from "./worktree-scan.js";

/** Who commits, as the Python store's repositories say. */
export interface CommitIdentity {
  name: string;
  email: string;
}

/** What a commit found wrong with a node file it therefore left out (the caller reports it). */
export interface LeftOutFile {
  relativePath: string;
  reason: string;
}

/** The result of an in-process commit: the new commit (null when nothing changed) and the node files left out. */
export interface InProcessCommit {
  commit: string | null;
  leftOut: LeftOutFile[];
}

/**
 * What this process knows of a repository since its last commit there: the
 * index it wrote (valid while `.git/index` is still that file), the HEAD
 * commit, its tree and the pack it is in, the objects it knows exist and how
 * many packs there are. Each file is still compared with its entry by its
 * stat, as git does: a file changed in place (which moves no folder's mtime)
 * is found that way.
 */
interface RepositoryMemory {
  indexKey: string;
  entries: IndexEntry[];
  head: KnownHead | null;
  objects: Set<string>;
  packs: number;
  /** Commits made from a list of changed node files since the last that compared every file. */
  sinceFullScan: number;
}

/** The HEAD commit, its tree, and the pack it was found or written in (null: a loose object). */
interface KnownHead {
  commit: string;
  tree: string;
  pack: string | null;
}

const memories = new Map<string, RepositoryMemory>();
/** Repositories whose settings were checked (no hooks, no ignore rules beyond ours). */
const checkedRepositories = new Set<string>();
const MAX_CACHED = 1024;
/** Past this many known object ids a repository's set is started again (the ids only save writes). */
const MAX_KNOWN_OBJECTS = 50_000;
/**
 * A session with fewer index entries compares every file at every commit; a longer one compares the node files
 * the store says changed, and every file at one commit in FULL_SCAN_EVERY, which also takes in a node file
 * someone changed in place (which neither moves history/'s mtime nor reaches the journal). Measured in the peers'
 * agent turn (10 node writes), comparing a 150-node session's every file was about a tenth of the turn's CPU
 * (an lstat per file), so only the shortest sessions do it every time.
 */
const NAMED_SCAN_FROM_ENTRIES = 64;
const FULL_SCAN_EVERY = 32;

/**
 * `git add -A && git commit -m message` done in this process: the files of the
 * session are compared with the index by their stat (as git does), changed
 * ones are hashed, and they, the trees and the commit are written as one pack
 * (merged with the smaller packs now and then: pack-merge.ts); then the
 * index (under `index.lock`, as git holds it) and the branch ref (under
 * `<ref>.lock`). Objects come before the index and the index before the ref,
 * so a kill at any point leaves a repository that `git fsck` accepts, with at
 * worst changes staged and not yet committed, which the next commit takes.
 * The index this process wrote last is kept in memory (no re-read, no
 * re-serialising of unchanged entries), and objects known to exist are not
 * written or looked for again.
 *
 * Throws UnsupportedIndexError for a repository that needs more of git than
 * this does (hooks, ignore or attributes files, a merge, index version 4,
 * a HEAD commit only git can read); the caller then runs git itself. Call under the session
 * lock, with `.git/index.lock` not held by anyone else.
 */
export async function commitInProcess(
  paths: SessionPaths,
  message: string,
  identity: CommitIdentity,
  now = new Date(),
  /**
   * The node files of history/ changed since this process's last commit here, when the store knows them all
   * (HistoryFiles.changedSinceCommit); null: compare every file. Used only while this process's index is the
   * repository's: then every other node file is as its entry says (node files are only ever renamed into place,
   * which moves history/'s mtime, and the store knew of every such move).
   */
  historyChanged: ReadonlySet<string> | null = null,
): Promise<InProcessCommit> {
  const gitDir = paths.git;
  checkRepositorySettings(paths);
  const head = readHead(gitDir);
  // Every folder written in must be a real one (a link would carry packs or refs outside the sessions root); files
  // are written under new names and renamed over theirs, which replaces a link instead of following it.
  assertRealDirectories(paths, [
    join(gitDir, "objects"),
    join(gitDir, "objects", "pack"),
    join(gitDir, "refs"),
    dirname(join(gitDir, head.ref)),
  ]);
  const indexPath = join(gitDir, "index");
  // lstat (not stat): a link in place of the index is refused, not read through.
  const indexStat = lstatSync(indexPath, { bigint: true, throwIfNoEntry: false });
  if (indexStat && !indexStat.isFile())
    throw new UnsafeSessionPathError(paths.sessionId, indexPath, `is a ${fileKind(indexStat)}, not a regular file`);
  const known = memories.get(gitDir);
  const memory = known?.indexKey === keyOf(indexStat) ? known : undefined;
  // Checked before anything is written: a parent that is gone fails the commit (a history on it would be broken).
  const parentTree = head.commit === null ? null : treeOf(gitDir, head.commit, memory);
  const lockPath = join(gitDir, "index.lock");
  // Created on the thread pool (a file creation waits on the journal, see createOffThread), with the pack's temp
  // files beside it: one wait for the three.
  const [lockCreated, tempsCreated] = await Promise.allSettled([
    createOffThread(lockPath, 0o600),
    createPackTemps(gitDir),
  ]);
  // Temps that could not be made ahead are made again by writePack, which reports what stops them.
  let temps = tempsCreated.status === "fulfilled" ? tempsCreated.value : null;
  if (lockCreated.status === "rejected") {
    if (temps) discardPackTemps(temps);
    throw lockCreated.reason;
  }
  const lockFd = lockCreated.value;
  let locked = true;
  try {
    const previous = memory?.entries ?? (indexStat ? parseIndex(readRegularFile(indexPath)) : []);
    const byPath = new Map(previous.map((entry) => [entry.path, entry]));
    const racyBefore = mtimeOf(indexStat);
    const leftOut: LeftOutFile[] = [];
    const entries: IndexEntry[] = [];
    // Trusted only while .git/index is the file this process wrote: a repository deleted and made anew at the
    // same path (or changed by git or Python) may lack objects this process wrote into the old one.
    const objects = memory?.objects ?? new Set<string>();
    // What the index names is in the repository (git writes an object before it stages it).
    if (!memory) for (const entry of previous) objects.add(entry.id);
    const pending: PendingObject[] = [];
    const write = (type: GitObjectType, content: Uint8Array): string => {
      const id = hashObject(type, content);
      if (!objects.has(id)) {
        objects.add(id);
        pending.push({ id, type, content });
      }
      return id;
    };
    const take = (file: WorktreeFile): void => {
      const mode = file.stat.isSymbolicLink() ? 0o120000 : (Number(file.stat.mode) & 0o111) !== 0 ? 0o100755 : 0o100644;
      const old = byPath.get(file.path);
      const fresh = entryFromStat(file.path, old?.id ?? "", mode, file.stat);
      // Git's racy rule: a file changed in the same instant the index was written may look unchanged by its stat.
      if (old && statMatches(old, fresh) && !isRacy(old, racyBefore)) {
        entries.push(old);
        return;
      }
      const content = mode === 0o120000 ? Buffer.from(readlinkSync(file.absolute)) : readRegularFile(file.absolute);
      const problem = nodeFileProblem(file.path, content);
      if (problem !== null) {
        // A torn or foreign-damaged node file keeps its last committed version, for `sessions doctor --fix`.
        leftOut.push({ relativePath: file.path, reason: problem });
        if (old) entries.push(old);
        return;
      }
      fresh.id = write("blob", content);
      entries.push(fresh);
    };
    const named = memory !== undefined && historyChanged !== null && previous.length >= NAMED_SCAN_FROM_ENTRIES;
    const scanNamed = named && memory.sinceFullScan + 1 < FULL_SCAN_EVERY;
    if (scanNamed) {
      // A long session's commit compares the files the turn wrote, not its thousands of earlier node files.
      const changed = historyChanged ?? new Set<string>();
      const changedPaths = new Set([...changed].map((name) => `history/${name}`));
      const files = [...scanWorktree(paths.dir, { skipHistory: true }), ...scanHistoryFiles(paths.dir, changed)];
      const unchanged = previous.filter((entry) => entry.path.startsWith("history/") && !changedPaths.has(entry.path));
      const merged: Array<WorktreeFile | IndexEntry> = [...files, ...unchanged];
      for (const item of merged.sort((a, b) => comparePaths(a.path, b.path))) {
        if ("absolute" in item) take(item);
        else entries.push(item);
      }
    } else {
      for (const file of scanWorktree(paths.dir).sort((a, b) => comparePaths(a.path, b.path))) take(file);
    }
    const tree = writeTrees(entries, write);
    const commit = parentTree === tree ? null : write("commit", commitBody(tree, head.commit, identity, message, now));
    let pack: string | null = null;
    let packs = memory?.packs ?? null;
    if (pending.length > 0) {
      const ahead = temps;
      temps = null;
      pack = await writePack(gitDir, pending.map(packEntry), ahead ? { temps: ahead } : {});
      packs = packs === null ? listPacks(gitDir).length : packs + 1;
      if (packs > PACKS_BEFORE_MERGE) {
        const merge = await mergeSmallPacks(gitDir);
        packs = merge.packs;
        if (merge.merged !== null && merge.from.includes(pack)) pack = merge.merged;
      }
    }
    try {
      writeFileSync(lockFd, serializeIndex(entries));
    } finally {
      closeSync(lockFd);
    }
    // Both renames replace a file: on the thread pool, where their wait for the journal holds no other session.
    // The ref's lock is taken while the index is renamed; the ref moves only after the index (see lockRef).
    const [indexRenamed, refLocked] = await Promise.allSettled([
      renameOffThread(lockPath, indexPath),
      commit === null ? null : lockRef(gitDir, head.ref, commit),
    ]);
    if (indexRenamed.status === "fulfilled") locked = false;
    else if (refLocked.status === "fulfilled") refLocked.value?.abandon();
    if (indexRenamed.status === "rejected") throw indexRenamed.reason;
    if (refLocked.status === "rejected") throw refLocked.reason;
    await refLocked.value?.move();
    const headNow = commit !== null ? { commit, tree, pack } : (memory?.head ?? null);
    remember(gitDir, {
      indexKey: keyOf(lstatSync(indexPath, { bigint: true, throwIfNoEntry: false })),
      entries,
      head: headNow,
      objects: objects.size > MAX_KNOWN_OBJECTS ? new Set() : objects,
      packs: packs ?? listPacks(gitDir).length,
      sinceFullScan: scanNamed ? (memory?.sinceFullScan ?? 0) + 1 : 0,
    });
    return { commit, leftOut };
  } catch (error) {
    // What this process knew may no longer be true (an object write failed half way): start from the files again.
    memories.delete(gitDir);
    throw error;
  } finally {
    // No pack was written (nothing new), or the commit failed before it: the temps made ahead go.
    if (temps) discardPackTemps(temps);
    if (locked) {
      try {
        closeSync(lockFd);
      } catch {
        // already closed by the index write
      }
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  }
}

function keyOf(stat: BigIntStats | undefined): string {
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}` : "missing";
}

/** The index's mtime in (seconds, nanoseconds), for git's racy-entry rule. */
function mtimeOf(stat: BigIntStats | undefined): { seconds: number; nanoseconds: number } {
  if (!stat) return { seconds: 0, nanoseconds: 0 };
  return { seconds: Number(stat.mtimeNs / 1_000_000_000n), nanoseconds: Number(stat.mtimeNs % 1_000_000_000n) };
}

function isRacy(entry: IndexEntry, index: { seconds: number; nanoseconds: number }): boolean {
  if (entry.mtimeSeconds !== index.seconds) return entry.mtimeSeconds > index.seconds;
  return entry.mtimeNanoseconds >= index.nanoseconds;
}

/**
 * The tree of a commit: from memory, else from its object, loose or in a pack
 * (whole, as ours are, or a delta as `git gc` stores it). The object must
 * still be there (a commit on a parent that is gone would make a broken history).
 */
function treeOf(gitDir: string, commit: string, memory: RepositoryMemory | undefined): string {
  const known = memory?.head;
  if (known?.commit === commit && stillStored(gitDir, known)) return known.tree;
  const loose = readLooseObject(gitDir, commit);
  const object = loose ? { ...loose, pack: null } : readPackedObject(gitDir, commit);
  if (!object) {
    if (readdirOrEmpty(join(gitDir, "objects", "pack")).some((name) => name.endsWith(".pack")))
      throw new UnsupportedIndexError(`commit ${commit} is packed in a way only git reads`);
    throw new Error(`the commit HEAD points at (${commit}) is missing from ${join(gitDir, "objects")}`);
  }
  if (object.type !== "commit") throw new Error(`HEAD points at a ${object.type}, not a commit`);
  const tree = /^tree ([0-9a-f]{40})\n/.exec(object.content.toString("latin1"))?.[1];
  if (tree === undefined) throw new UnsupportedIndexError(`commit ${commit} names no tree`);
  if (memory) memory.head = { commit, tree, pack: object.pack };
  return tree;
}

/** The remembered HEAD commit is still in the pack it was in, or loose. */
function stillStored(gitDir: string, head: KnownHead): boolean {
  if (head.pack !== null && existsSync(join(gitDir, "objects", "pack", `${head.pack}.idx`))) return true;
  return hasLooseObject(gitDir, head.commit);
}

/** Why a node file in history/ must not be committed, or null (any other file is committed as it is). */
function nodeFileProblem(path: string, content: Buffer): string | null {
  const [folder, name, ...rest] = path.split("/");
  if (folder !== "history" || name === undefined || rest.length > 0) return null;
  const parsed = parseNodeFileName(name);
  if (!parsed) return null;
  const node = parseNodeText(content.toString("utf8"), parsed.seq);
  return typeof node === "string" ? node : null;
}

/** A commit object's text, as `git commit -m` writes it (message cleaned of trailing blanks, ending in a newline). */
export function commitBody(
  tree: string,
  parent: string | null,
  identity: CommitIdentity,
  message: string,
  now: Date,
): Buffer {
  const offsetMinutes = -now.getTimezoneOffset();
  const sign = offsetMinutes < 0 ? "-" : "+";
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, "0");
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, "0");
  const signature = `${identity.name} <${identity.email}> ${Math.floor(now.getTime() / 1000)} ${sign}${hours}${minutes}`;
  const lines = [`tree ${tree}`];
  if (parent !== null) lines.push(`parent ${parent}`);
  lines.push(`author ${signature}`, `committer ${signature}`, "", cleanMessage(message));
  return Buffer.from(lines.join("\n"), "utf8");
}

/** git's "whitespace" cleanup of a `-m` message: trailing spaces and blank lines at the ends dropped, runs of blank lines made one. */
function cleanMessage(message: string): string {
  const lines = message.split("\n").map((line) => line.replace(/\s+$/, ""));
  const kept: string[] = [];
  for (const line of lines) if (line !== "" || (kept.length > 0 && kept[kept.length - 1] !== "")) kept.push(line);
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  return `${kept.length > 0 ? kept.join("\n") : "turn"}\n`;
}

/**
 * The repository must need nothing but what this writer does: no ignore or
 * attributes rules beyond ours, no line-ending conversion. Hooks are not
 * among them: no commit of ours runs one (git runs with core.hooksPath
 * pinned to /dev/null), so a hook planted in a session never sends its
 * commits to git. Checked once per repository and process.
 */
function checkRepositorySettings(paths: SessionPaths): void {
  const gitDir = paths.git;
  if (checkedRepositories.has(gitDir)) return;
  assertRealDirectories(paths, [join(gitDir, "info")]);
  const exclude = readOrEmpty(join(gitDir, "info", "exclude"));
  for (const line of exclude.split("\n")) {
    const rule = line.trim();
    if (rule !== "" && !rule.startsWith("#") && !GIT_EXCLUDES.includes(rule))
      throw new UnsupportedIndexError(`.git/info/exclude has the rule ${rule}`);
  }
  if (existsSync(join(gitDir, "info", "attributes"))) throw new UnsupportedIndexError(".git/info/attributes exists");
  const config = readOrEmpty(join(gitDir, "config")).toLowerCase();
  for (const setting of ["excludesfile", "attributesfile", "autocrlf = true", "autocrlf = input", "[filter"])
    if (config.includes(setting)) throw new UnsupportedIndexError(`.git/config sets ${setting}`);
  if (existsSync(join(gitDir, "MERGE_HEAD"))) throw new UnsupportedIndexError("a merge is in progress");
  if (checkedRepositories.size >= MAX_CACHED) checkedRepositories.clear();
  checkedRepositories.add(gitDir);
}

/** The file's text; empty when it is missing. A link or a FIFO is thrown (readRegularFile), never read through. */
function readOrEmpty(path: string): string {
  return readRegularFileOrNull(path) ?? "";
}

/** Drops what this process knew of a repository (after `git gc`, or anything else that rewrites it). */
export function forgetRepository(gitDir: string): void {
  memories.delete(gitDir);
}

function remember(gitDir: string, memory: RepositoryMemory): void {
  if (memories.size >= MAX_CACHED && !memories.has(gitDir)) memories.clear();
  memories.set(gitDir, memory);
}
