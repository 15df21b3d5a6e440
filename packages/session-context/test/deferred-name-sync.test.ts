// Writes made with `deferNameSync` (a model request's running node, an agentic
// call's running node and result, a reply whose tool calls are recorded next)
// are renamed into place and logged (session-wal.ts) without any fsync; the
// session's next write that waits fdatasyncs the log once for both, and the
// turn's end does for what is left. Observed through node:fs itself (every
// call still reaches the real file system).
import type * as NodeFs from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const seen = vi.hoisted(() => ({ fsyncs: 0 }));
// fsync and fdatasync both count, on the pool or on the loop's thread (fdatasyncSync: the log's, when one session
// writes): a deferred write makes neither.
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    fsync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      seen.fsyncs += 1;
      actual.fsync(fd, callback);
    },
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      seen.fsyncs += 1;
      actual.fdatasync(fd, callback);
    },
    fdatasyncSync: (fd: number): void => {
      seen.fsyncs += 1;
      actual.fdatasyncSync(fd);
    },
  };
});

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-deferred-names-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "deferred" });
  await db.beginTurn("s", "turn_a");
});
afterEach(() => store.cleanup());

/** The fsyncs and fdatasyncs `write` made. */
async function fsyncsOf(write: () => Promise<unknown>): Promise<number> {
  const before = seen.fsyncs;
  await write();
  return seen.fsyncs - before;
}

describe("deferNameSync", () => {
  it("makes no fsync; the next write that waits fdatasyncs the log once for both", async () => {
    const running = { role: "llm" as const, name: "m", caller: "", metadata: { status: "running" } };
    let id = "";
    expect(await fsyncsOf(async () => (id = (await db.appendNode("s", running, { deferNameSync: true })).id))).toBe(0);
    expect(await fsyncsOf(() => db.updateNode("s", id, { output: "hi" }, { deferNameSync: true }))).toBe(0);
    // Readable at once, in this process and any other.
    expect((await new SessionDB({ root: store.root }).getNode("s", id))?.output).toBe("hi");
    // The next ordinary write: one fdatasync of the log, which covers the deferred writes too.
    expect(await fsyncsOf(() => db.appendNode("s", { role: "code", name: "tool", caller: id }))).toBe(1);
    expect(await fsyncsOf(() => db.appendNode("s", { role: "code", name: "tool", caller: id }))).toBe(1);
  });

  it("the turn's end makes what is still deferred durable, with the one fdatasync it makes anyway", async () => {
    const endAfter = async (turnId: string, deferNameSync: boolean): Promise<number> => {
      await db.beginTurn("s", turnId);
      await db.appendNode("s", { role: "llm", name: "m", caller: "", output: turnId }, { deferNameSync });
      return fsyncsOf(() => db.endTurn("s", turnId, { status: "idle" }));
    };
    await db.endTurn("s", "turn_a", { status: "idle" });
    const plainEnd = await endAfter("turn_b", false);
    expect(await endAfter("turn_c", true)).toBe(plainEnd);
    expect(plainEnd).toBe(1);
  });
});
