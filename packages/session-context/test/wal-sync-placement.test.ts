// Where a node write waits for its log's fdatasync (session-wal.ts appendWal, lease-lock.ts soleWriterHere): on the
// event loop's thread while its session is all this process is writing, on libuv's pool while another session has
// a write under way or a turn running. node:fs's two fdatasyncs are watched (each call names the file it syncs
// through /proc/self/fd); every call reaches the real file system, but for one failure a test asks for.
import type * as NodeFs from "node:fs";
import { existsSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { storeInternals } from "../src/store/internal.js";
import { soleWriterHere } from "../src/store/lease-lock.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const syncs = vi.hoisted(() => ({ here: [] as string[], pool: [] as string[], failHere: false }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  const pathOf = (fd: number): string => {
    try {
      return actual.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return `fd ${fd}`;
    }
  };
  return {
    ...actual,
    fdatasyncSync: (fd: number): void => {
      syncs.here.push(pathOf(fd));
      if (syncs.failHere) {
        syncs.failHere = false;
        const error: NodeJS.ErrnoException = new Error("EIO: i/o error, fdatasync");
        error.code = "EIO";
        throw error;
      }
      actual.fdatasyncSync(fd);
    },
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      syncs.pool.push(pathOf(fd));
      actual.fdatasync(fd, callback);
    },
  };
});

const ofLogs = (paths: readonly string[]): string[] => paths.filter((path) => path.endsWith("/.state/wal"));

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-wal-sync-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "a", title: "one" });
  await db.createSession({ id: "b", title: "another" });
  syncs.here.length = 0;
  syncs.pool.length = 0;
});
afterEach(() => store.cleanup());

describe.runIf(existsSync("/proc/self/fd"))("a node write's fdatasync of its log", () => {
  it("runs on the event loop's thread while its session is all the process writes", async () => {
    await db.appendNode("a", { role: "user", output: "hello" }, { atHead: true });
    expect(ofLogs(syncs.here)).toEqual([`${store.root}/a/.state/wal`]);
    expect(ofLogs(syncs.pool)).toEqual([]);
  });

  it("goes to the pool while another session has a write under way, and comes back after", async () => {
    const section: { finish: (() => void) | null } = { finish: null };
    const other = storeInternals(db).withSessionLock(
      "b",
      () => new Promise<void>((resolve) => (section.finish = resolve)),
    );
    await vi.waitFor(() => expect(section.finish).not.toBeNull());
    expect(soleWriterHere(`${store.root}/a/.state/lock`)).toBe(false);
    await db.appendNode("a", { role: "user", output: "while b writes" }, { atHead: true });
    expect(ofLogs(syncs.pool)).toEqual([`${store.root}/a/.state/wal`]);
    expect(ofLogs(syncs.here)).toEqual([]);
    section.finish?.();
    await other;
    expect(soleWriterHere(`${store.root}/a/.state/lock`)).toBe(true);
    await db.appendNode("a", { role: "user", output: "alone again" }, { atHead: true });
    expect(ofLogs(syncs.here)).toEqual([`${store.root}/a/.state/wal`]);
  });

  it("goes to the pool while a turn of another session runs in this process", async () => {
    await db.beginTurn("b", "turn_b");
    syncs.here.length = 0;
    syncs.pool.length = 0;
    await db.appendNode("a", { role: "user", output: "beside b's turn" }, { atHead: true });
    expect(ofLogs(syncs.pool)).toEqual([`${store.root}/a/.state/wal`]);
    expect(ofLogs(syncs.here)).toEqual([]);
    await db.endTurn("b", "turn_b", { status: "idle" });
  });

  it("that fails on this thread leaves the write durable by fsyncing its files instead, as on the pool", async () => {
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      syncs.failHere = true;
      const node = await db.appendNode("a", { role: "user", output: "still written" }, { atHead: true });
      expect(warnings.mock.calls.some(([message]) => String(message).includes("cannot be written (EIO"))).toBe(true);
      const again = new SessionDB({ root: store.root });
      expect((await again.getNode("a", node.id))?.output).toBe("still written");
      // The session goes on: the next write logs again.
      await db.appendNode("a", { role: "user", output: "next" }, { atHead: true });
      expect(ofLogs(syncs.here)).toHaveLength(2);
    } finally {
      warnings.mockRestore();
    }
  });
});
