// Issue 19, then issue 38: a node that moves the head is written with its meta.json as one grouped write, the node
// renamed before meta.json; neither file is fsynced on its own: both texts go to the session's write-ahead log in one
// append, and one fdatasync of the log makes the write durable (it waited for four fsyncs in two rounds before the
// log). Observed through node:fs itself (every call still reaches the real file system).
import type * as NodeFs from "node:fs";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StoreWriteError } from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { walSyncPlacement } from "../src/store/session-wal.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const seen = vi.hoisted(() => ({
  /** fsyncs begun and not yet finished, and the most at once. */
  inFlight: 0,
  mostAtOnce: 0,
  /** Every fsync round (fsyncs that overlapped count as one). */
  rounds: 0,
  fsyncs: 0,
  /** fdatasyncs: the write-ahead log's. */
  fdatasyncs: 0,
  renamedTo: [] as string[],
  /** fsyncs in flight when each rename was made. */
  inFlightAtRename: [] as number[],
  /** fsyncs in flight when the commit took the index lock (.git/index.lock). */
  inFlightAtCommitLock: null as number | null,
  /** Opening a temp file whose name contains this fails with ENOSPC. */
  failOpenOf: null as string | null,
}));

vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    fsync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      if (seen.inFlight === 0) seen.rounds += 1;
      seen.inFlight += 1;
      seen.fsyncs += 1;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.inFlight);
      actual.fsync(fd, (error) => {
        seen.inFlight -= 1;
        callback(error);
      });
    },
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      if (seen.inFlight === 0) seen.rounds += 1;
      seen.inFlight += 1;
      seen.fdatasyncs += 1;
      seen.mostAtOnce = Math.max(seen.mostAtOnce, seen.inFlight);
      actual.fdatasync(fd, (error) => {
        seen.inFlight -= 1;
        callback(error);
      });
    },
    // The log's, made on the loop's thread while one session is all the process writes (session-wal.ts): a round
    // of its own, never in flight beside anything.
    fdatasyncSync: (fd: number): void => {
      if (seen.inFlight === 0) seen.rounds += 1;
      seen.fdatasyncs += 1;
      actual.fdatasyncSync(fd);
    },
    renameSync: (from: NodeFs.PathLike, to: NodeFs.PathLike): void => {
      seen.renamedTo.push(String(to));
      seen.inFlightAtRename.push(seen.inFlight);
      actual.renameSync(from, to);
    },
    // The store's renames over existing files run on the thread pool (renameOffThread).
    rename: (from: NodeFs.PathLike, to: NodeFs.PathLike, callback: (error: NodeJS.ErrnoException | null) => void) => {
      seen.renamedTo.push(String(to));
      seen.inFlightAtRename.push(seen.inFlight);
      actual.rename(from, to, callback);
    },
    // The store creates its temp files and lock files on the thread pool (createOffThread).
    open: (path: NodeFs.PathLike, ...rest: unknown[]): void => {
      const callback = rest.pop() as (error: NodeJS.ErrnoException | null, fd?: number) => void;
      if (String(path).endsWith("index.lock")) seen.inFlightAtCommitLock = seen.inFlight;
      if (seen.failOpenOf !== null && String(path).includes(seen.failOpenOf) && String(path).includes(".tmp-")) {
        process.nextTick(callback, Object.assign(new Error("ENOSPC: injected"), { code: "ENOSPC" }));
        return;
      }
      (actual.open as (...args: unknown[]) => void)(path, ...rest, callback);
    },
    openSync: (path: NodeFs.PathLike, flags: NodeFs.OpenMode = "r", mode?: NodeFs.Mode): number => {
      if (String(path).endsWith("index.lock")) seen.inFlightAtCommitLock = seen.inFlight;
      if (seen.failOpenOf !== null && String(path).includes(seen.failOpenOf) && String(path).includes(".tmp-"))
        throw Object.assign(new Error("ENOSPC: injected"), { code: "ENOSPC" });
      return actual.openSync(path, flags, mode);
    },
  };
});

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-grouped-");
});
afterEach(() => store.cleanup());

/** Starts counting afresh, once the registry's queued write (registry.ts) is done: only the append is counted. */
async function resetSeen(): Promise<void> {
  await store.db.flushRegistry();
  Object.assign(seen, {
    inFlight: 0,
    mostAtOnce: 0,
    rounds: 0,
    fsyncs: 0,
    fdatasyncs: 0,
    renamedTo: [],
    inFlightAtRename: [],
    inFlightAtCommitLock: null,
    failOpenOf: null,
  });
}

describe("a node and the meta.json whose head names it", () => {
  it("are made durable together by one fdatasync of the log, the node renamed first", async () => {
    await store.db.createSession({ id: "grouped" });
    await store.db.appendNode("grouped", { role: "user", output: "first" }, { atHead: true });
    await resetSeen();

    const node = await store.db.appendNode("grouped", { role: "user", output: "second" }, { atHead: true });

    // Neither file fsynced on its own: both logged, the log fdatasynced once.
    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(1);
    expect(seen.rounds).toBe(1);
    const dir = join(store.root, "grouped");
    const nodeFile = readdirSync(join(dir, "history")).find((name) => name.includes(node.id)) as string;
    expect(seen.renamedTo).toEqual([join(dir, "history", nodeFile), join(dir, "meta.json")]);
    expect((JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as { head_id: string }).head_id).toBe(node.id);
  });

  it("a reply that extends the head is updated with meta.json in the same grouped write", async () => {
    await store.db.createSession({ id: "reply" });
    await store.db.appendNode("reply", { role: "user", output: "question" }, { atHead: true });
    const reply = await store.db.appendNode("reply", { role: "llm", output: null }, { atHead: true, moveHead: false });
    await resetSeen();

    await store.db.updateNode("reply", reply.id, { output: "answer" }, { advanceHead: true });

    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(1);
    expect(seen.renamedTo.map((path) => path.split("/").pop())).toEqual([
      expect.stringContaining(reply.id),
      "meta.json",
    ]);
    expect((await store.db.readMeta("reply")).head_id).toBe(reply.id);
  });

  it("a node too big to write on the event loop's thread is written whole from the thread pool", async () => {
    await store.db.createSession({ id: "big" });
    await resetSeen();
    const output = "é".repeat(400 * 1024);

    const node = await store.db.appendNode("big", { role: "user", output }, { atHead: true });

    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(1);
    const reread = new SessionDB({ root: store.root });
    expect((await reread.getNode("big", node.id))?.output).toBe(output);
    expect((await reread.readMeta("big")).head_id).toBe(node.id);
  });

  it("a node that does not move the head is written alone", async () => {
    await store.db.createSession({ id: "alone" });
    const root = await store.db.appendNode("alone", { role: "user", output: "root" }, { atHead: true });
    await resetSeen();

    await store.db.appendNode("alone", { role: "code", name: "tool", caller: root.id, output: "inner" });

    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(1);
    expect(seen.renamedTo).toHaveLength(1);
  });

  it("a failure before the renames leaves neither the node nor a temp file, and the head where it was", async () => {
    await store.db.createSession({ id: "failing" });
    const first = await store.db.appendNode("failing", { role: "user", output: "kept" }, { atHead: true });
    const dir = join(store.root, "failing");
    const metaBefore = readFileSync(join(dir, "meta.json"), "utf8");
    await resetSeen();
    seen.failOpenOf = ".meta.json";

    const error = await store.db
      .appendNode("failing", { role: "user", output: "lost" }, { atHead: true })
      .catch((caught: unknown) => caught);

    seen.failOpenOf = null;
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as Error).message).toContain("meta.json");
    expect(readdirSync(join(dir, "history"))).toHaveLength(1);
    expect(readdirSync(dir).filter((name) => name.includes(".tmp-"))).toEqual([]);
    expect(readFileSync(join(dir, "meta.json"), "utf8")).toBe(metaBefore);
    expect((await store.db.loadNodes("failing")).map((node) => node.id)).toEqual([first.id]);
    // The session goes on: the next append takes the seq the failed one did not use.
    const next = await store.db.appendNode("failing", { role: "user", output: "again" }, { atHead: true });
    expect(next.seq).toBe(first.seq + 1);
    expect((await store.db.readMeta("failing")).head_id).toBe(next.id);
  });

  it("a turn's end commits while the log is being fdatasynced for meta.json, and ends durable and committed", async () => {
    await store.db.createSession({ id: "ending" });
    await store.db.beginTurn("ending", "turn_end");
    const user = await store.db.appendNode("ending", { role: "user", output: "hello" }, { atHead: true });
    // Last write of the turn: a node that leaves the head (and meta.json) where it was.
    await store.db.appendNode("ending", { role: "code", name: "tool", caller: user.id, output: "inner" });
    await resetSeen();

    // The overlap is the pool's: a process with other sessions at work hands the log's fdatasync there, where one
    // session alone waits for it on the loop's thread (session-wal.ts), before its commit begins.
    walSyncPlacement.onLoopThread = false;
    let sha: string | null;
    try {
      sha = await store.db.endTurn("ending", "turn_end", { status: "idle" });
    } finally {
      walSyncPlacement.onLoopThread = true;
    }

    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const dir = join(store.root, "ending");
    expect(seen.renamedTo.indexOf(join(dir, ".git", "index"))).toBeGreaterThan(
      seen.renamedTo.indexOf(join(dir, "meta.json")),
    );
    // The commit began (took the index lock) while the log's fdatasync, for meta.json, was in flight.
    expect(seen.inFlightAtCommitLock).toBe(1);
    expect(seen.inFlight).toBe(0);
    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(1);
  });

  it("a turn whose last write moved the head ends without writing meta.json again, its updated_at committed", async () => {
    await store.db.createSession({ id: "stamped" });
    await store.db.beginTurn("stamped", "turn_stamped");
    await store.db.appendNode("stamped", { role: "user", output: "hello" }, { atHead: true });
    const reply = await store.db.appendNode(
      "stamped",
      { role: "llm", output: null },
      { atHead: true, moveHead: false },
    );
    const before = Date.now() / 1000;
    await store.db.updateNode("stamped", reply.id, { output: "hi" }, { advanceHead: true });
    const stamped = (await store.db.readMeta("stamped")).updated_at;
    await resetSeen();

    const sha = await store.db.endTurn("stamped", "turn_stamped", { status: "idle" });

    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const dir = join(store.root, "stamped");
    expect(seen.renamedTo).not.toContain(join(dir, "meta.json"));
    expect(seen.fsyncs).toBe(0);
    expect(seen.fdatasyncs).toBe(0);
    expect(stamped).toBeGreaterThanOrEqual(before - 1);
    const meta = readFileSync(join(dir, "meta.json"), "utf8");
    expect((JSON.parse(meta) as { head_id: string }).head_id).toBe(reply.id);
    // The committed meta.json is the file on disk: the repository is clean after the turn.
    const { execFileSync } = await import("node:child_process");
    const git = (...args: string[]): string => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" });
    expect(git("show", "HEAD:meta.json")).toBe(meta);
    expect(git("status", "--porcelain")).toBe("");
    await store.db.flushRegistry();
    expect((await store.db.getSession("stamped"))?.updated_at).toBe(stamped);
  });

  it("a turn's end writes meta.json itself when another writer replaced it after the head moved", async () => {
    await store.db.createSession({ id: "replaced" });
    await store.db.beginTurn("replaced", "turn_replaced");
    await store.db.appendNode("replaced", { role: "user", output: "hello" }, { atHead: true });
    await store.db.updateSession("replaced", { title: "renamed meanwhile" });
    await resetSeen();

    await store.db.endTurn("replaced", "turn_replaced", { status: "idle" });

    expect(seen.renamedTo).toContain(join(store.root, "replaced", "meta.json"));
    expect((await store.db.readMeta("replaced")).title).toBe("renamed meanwhile");
  });
});
