// A batch of node writes (StoreInternals.writeNodes): an update and the appends after it written as one, with one
// lock section, one append to the write-ahead log, one journal append and one fdatasync (none when every write defers
// its name's sync). The tool loop writes a reply that asked for tools with its first tool's running node this way
// (tools/reply-write.ts). Observed through node:fs itself: every call still reaches the real file system.
import type * as NodeFs from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { agenticFunction, sessionContext, tool, type SessionNode } from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { InvalidNodeError, NodeNotFoundError } from "../src/errors.js";
import { runningNodeDelay, RUNNING_NODE_DELAY_MS } from "../src/runtime/running-node.js";
import { heldFileDelay, HELD_FILE_DELAY_MS } from "../src/store/held-files.js";
import { storeInternals } from "../src/store/internal.js";
import { readWal } from "../src/store/session-wal.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

const seen = vi.hoisted(() => ({ fsyncs: 0, walOpens: 0, journalOpens: 0 }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      seen.fsyncs += 1;
      actual.fdatasync(fd, callback);
    },
    // The log's, made on the loop's thread while this session is all the process writes (session-wal.ts).
    fdatasyncSync: (fd: number): void => {
      seen.fsyncs += 1;
      actual.fdatasyncSync(fd);
    },
    fsync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      seen.fsyncs += 1;
      actual.fsync(fd, callback);
    },
    openSync: (path: NodeFs.PathLike, ...rest: unknown[]): number => {
      // Opens for appending only (another reader's open of the log to replay it is not a write).
      const appending = typeof rest[0] === "number" && (rest[0] & actual.constants.O_APPEND) !== 0;
      if (appending && String(path).endsWith("/.state/wal")) seen.walOpens += 1;
      if (appending && String(path).endsWith("/.state/journal")) seen.journalOpens += 1;
      return (actual.openSync as (...args: unknown[]) => number)(path, ...rest);
    },
  };
});

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-node-batches-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "batches" });
  await db.beginTurn("s", "turn_a");
});
afterEach(async () => {
  await db.endTurn("s", "turn_a", { status: "idle" }).catch(() => undefined);
  store.cleanup();
});

/** What `write` cost: fdatasyncs and fsyncs, appends to the log and to the journal (an open each). */
async function costOf(
  write: () => Promise<unknown>,
): Promise<{ fsyncs: number; walOpens: number; journalOpens: number }> {
  const before = { ...seen };
  await write();
  return {
    fsyncs: seen.fsyncs - before.fsyncs,
    walOpens: seen.walOpens - before.walOpens,
    journalOpens: seen.journalOpens - before.journalOpens,
  };
}

const walPath = (): string => storeInternals(db).paths("s").wal;

describe("writeNodes", () => {
  it("writes an update and an append as one: one log append of both, one journal append, one fdatasync", async () => {
    const reply = await db.appendNode(
      "s",
      { role: "llm", name: "m", metadata: { status: "running" } },
      { deferNameSync: true },
    );
    const recordsBefore = readWal(walPath()).length;
    let written: Awaited<ReturnType<ReturnType<typeof storeInternals>["writeNodes"]>> = [];
    const cost = await costOf(async () => {
      written = await storeInternals(db).writeNodes("s", [
        { op: "update", nodeId: reply.id, patch: { output: "calling", metadata: { status: "completed" } } },
        { op: "append", draft: { role: "code", name: "lookup", caller: reply.id, metadata: { status: "running" } } },
      ]);
    });
    expect(cost).toEqual({ fsyncs: 1, walOpens: 1, journalOpens: 1 });
    const [updated, appended] = written;
    expect(updated).toMatchObject({ id: reply.id, output: "calling", metadata: { status: "completed" } });
    expect(appended).toMatchObject({ role: "code", caller: reply.id, seq: reply.seq + 1 });
    // Both texts in the log, in order; both readable at once by another process.
    const records = readWal(walPath()).slice(recordsBefore);
    expect(records.map((record) => (JSON.parse(record.data) as { id: string }).id)).toEqual([reply.id, appended?.id]);
    const other = new SessionDB({ root: store.root });
    expect((await other.getNode("s", reply.id))?.output).toBe("calling");
    expect((await other.getNode("s", appended?.id as string))?.metadata.status).toBe("running");
  });

  it("makes no fdatasync when every write defers its name's sync", async () => {
    const reply = await db.appendNode("s", { role: "llm", name: "m" }, { deferNameSync: true });
    const cost = await costOf(() =>
      storeInternals(db).writeNodes("s", [
        { op: "update", nodeId: reply.id, patch: { output: "x" }, options: { deferNameSync: true } },
        { op: "append", draft: { role: "code", name: "t", caller: reply.id }, options: { deferNameSync: true } },
      ]),
    );
    expect(cost.fsyncs).toBe(0);
  });

  it("moves the head by its first write, as an update alone would", async () => {
    const reply = await db.appendNode(
      "s",
      { role: "llm", name: "m" },
      { atHead: true, rootMarker: null, moveHead: false },
    );
    await storeInternals(db).writeNodes("s", [
      { op: "update", nodeId: reply.id, patch: { output: "done" }, options: { advanceHead: true } },
      { op: "append", draft: { role: "code", name: "t", caller: reply.id } },
    ]);
    expect((await db.readMeta("s")).head_id).toBe(reply.id);
  });

  it("refuses a later write that would move the head, and a node that is not there, writing nothing", async () => {
    const first = await db.appendNode("s", { role: "user", output: "hi" }, { atHead: true });
    const before = (await db.loadNodes("s")).length;
    await expect(
      storeInternals(db).writeNodes("s", [
        { op: "append", draft: { role: "code", name: "t", caller: first.id } },
        { op: "append", draft: { role: "user", output: "again" }, options: { atHead: true } },
      ]),
    ).rejects.toThrow(InvalidNodeError);
    await expect(
      storeInternals(db).writeNodes("s", [
        { op: "append", draft: { role: "code", name: "t", caller: first.id } },
        { op: "update", nodeId: "no_such_node", patch: { output: 1 } },
      ]),
    ).rejects.toThrow(NodeNotFoundError);
    expect((await db.loadNodes("s")).length).toBe(before);
    expect((await db.readMeta("s")).head_id).toBe(first.id);
  });
});

describe("a tool loop's reply and its first tool's node", () => {
  it("are logged in one write before the tool runs, the reply in place and the tool's file held", async () => {
    await db.endTurn("s", "turn_a", { status: "idle" });
    const { runtime } = scriptedRuntime([
      { reply: "Looking it up.", toolCalls: [{ id: "call_1", name: "lookup", arguments: { key: "a" } }] },
      "It is 1.",
    ]);
    const seenByTool: Array<{ replyStatus: unknown; toolCalls: unknown; toolStatus: unknown; logged: unknown }> = [];
    const lookup = tool({
      name: "lookup",
      description: "Looks a key up.",
      input: z.object({ key: z.string() }),
      execute: async () => {
        // What another process sees while the tool runs.
        const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
        const reply = nodes.find((node) => node.role === "llm");
        const code = nodes.find((node) => node.role === "code" && node.name === "lookup");
        // What a crash now would leave: the log's recovery puts the file in place from this record.
        const logged = readWal(join(store.root, "s", ".state", "wal"))
          .filter((record) => record.rel.startsWith("history/"))
          .map((record) => JSON.parse(record.data) as SessionNode)
          .find((node) => node.name === "lookup");
        seenByTool.push({
          replyStatus: reply?.metadata.status,
          toolCalls: reply?.metadata.tool_calls,
          toolStatus: code?.metadata.status,
          logged: logged?.metadata.status,
        });
        return 1;
      },
    });
    const answer = agenticFunction({ name: "answer", doc: "Answer." }, async (_input: object, { runtime: rt }) =>
      rt.exec("What is a?", { tools: [lookup] }),
    );
    let cost = { fsyncs: 0, walOpens: 0, journalOpens: 0 };
    const before = { ...seen };
    // The replies come at once: pinned so that neither running node is written, nor the tool's held file put in
    // place on its own, however slow the machine.
    runningNodeDelay.ms = 60_000;
    heldFileDelay.ms = 60_000;
    try {
      await sessionContext({ db, runtime, sessionId: "s" }, async () => {
        expect(await answer({})).toBe("It is 1.");
        cost = {
          fsyncs: seen.fsyncs - before.fsyncs,
          walOpens: seen.walOpens - before.walOpens,
          journalOpens: seen.journalOpens - before.journalOpens,
        };
      });
    } finally {
      runningNodeDelay.ms = RUNNING_NODE_DELAY_MS;
      heldFileDelay.ms = HELD_FILE_DELAY_MS;
    }
    expect(seenByTool).toEqual([
      {
        replyStatus: "completed",
        toolCalls: [{ id: "call_1", name: "lookup", arguments: '{"key":"a"}' }],
        toolStatus: undefined,
        logged: "running",
      },
    ]);
    const lookupNode = (await new SessionDB({ root: store.root }).loadNodes("s")).find(
      (node) => node.name === "lookup",
    );
    expect(lookupNode?.metadata.status).toBe("completed");
    // The call's node (appended, then updated), two replies (each written once, completed: they came before their
    // running node's delay) and the tool's node (appended, then updated): the first reply and the tool's append are
    // one write, so five writes where there would be six.
    expect(cost.walOpens).toBe(5);
    expect(cost.journalOpens).toBe(5);
  });
});
