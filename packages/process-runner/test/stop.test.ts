import { CancelledError, sessionContext, type SessionNode } from "@openprogram/session-context";
import { describe, expect, it } from "vitest";
import { ChildTimeoutError, runInChild } from "../src/index.js";
import {
  eventRecorder,
  groupExists,
  isRunning,
  liveGroupMembers,
  noProviderEnv,
  programPath,
  scriptedEnv,
  useTempStore,
  waitFor,
} from "./helpers.js";

const SLOW = programPath("slow.ts");
const STUBBORN = programPath("stubborn.ts");
const SLOW_REPLY = [{ reply: "too late", delayMs: 600_000 }];

describe("stop: graceful first, then SIGKILL of the whole process group", () => {
  const store = useTempStore();

  it("stop() aborts the child's signal; it records its running nodes cancelled and exits by itself", async () => {
    const recorder = eventRecorder();
    const { sessionId, error, pid } = await sessionContext(
      { db: store.db, runtime: null, onEvent: recorder.onEvent, source: "test" },
      async (session) => {
        // A grace period far longer than the test: a kill would have to wait for it.
        const run = runInChild({
          module: SLOW,
          export: "slowAnswer",
          input: {},
          env: scriptedEnv(store, SLOW_REPLY),
          graceMs: 600_000,
        });
        await recorder.whenNode((node) => node.name === "slow_answer");
        await run.stop("enough");
        return {
          sessionId: session.sessionId,
          error: await run.result.catch((caught: unknown) => caught),
          pid: run.pid as number,
        };
      },
    );
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as Error).message).toBe("Cancelled: enough");
    expect(isRunning(pid)).toBe(false);
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.role, node.metadata.status])).toEqual([
      ["code", "cancelled"],
      ["llm", "cancelled"],
    ]);
    expect((nodes[0] as SessionNode).metadata.error).toMatchObject({ code: "cancelled", message: "Cancelled: enough" });
  });

  it("kills the whole group when the child ignores the abort: no process survives, running nodes are recorded killed", async () => {
    const recorder = eventRecorder();
    const outcome = await sessionContext(
      { db: store.db, runtime: null, onEvent: recorder.onEvent, source: "test" },
      async (session) => {
        const run = runInChild({
          module: STUBBORN,
          export: "stubborn",
          input: {},
          env: noProviderEnv(store),
          graceMs: 300,
        });
        const started = await recorder.whenNode((node, op) => node.name === "start_grandchild" && op === "update");
        const grandchild = (started.output as { pid: number }).pid;
        const pid = run.pid as number;
        const aliveBefore = { child: isRunning(pid), grandchild: isRunning(grandchild), group: liveGroupMembers(pid) };
        await run.stop("kill it");
        // stop() resolves once the child is gone; SIGKILL'd members may take a moment to be reaped by init.
        await waitFor(() => liveGroupMembers(pid).length === 0, "the process group to be empty");
        return {
          sessionId: session.sessionId,
          pid,
          grandchild,
          aliveBefore,
          error: await run.result.catch((caught: unknown) => caught),
        };
      },
    );
    // The group also holds whatever else the child started (tsx's esbuild service, for one).
    expect(outcome.aliveBefore).toEqual({
      child: true,
      grandchild: true,
      group: expect.arrayContaining([outcome.pid, outcome.grandchild]) as unknown,
    });
    expect(isRunning(outcome.pid)).toBe(false);
    expect(isRunning(outcome.grandchild)).toBe(false);
    // Dead members linger as zombies until init reaps them; then the group no longer exists at all.
    await waitFor(() => !groupExists(outcome.pid), "init to reap the killed group");
    expect(outcome.error).toMatchObject({ name: "CancelledError", code: "cancelled", message: "Cancelled: kill it" });

    const nodes = await store.db.loadNodes(outcome.sessionId);
    const stubborn = nodes.find((node) => node.name === "stubborn") as SessionNode;
    expect(stubborn.metadata.status).toBe("killed");
    expect(typeof stubborn.metadata.killed_at).toBe("number");
    expect(nodes.find((node) => node.name === "start_grandchild")?.metadata.status).toBe("completed");
    // The kill is streamed like any other change.
    expect(
      recorder.events.some(
        (event) =>
          event.type === "node" &&
          event.op === "update" &&
          event.node.id === stubborn.id &&
          event.node.metadata.status === "killed",
      ),
    ).toBe(true);
  });

  it("the parent context's signal stops the child the same way", async () => {
    const controller = new AbortController();
    const recorder = eventRecorder();
    const { sessionId, error } = await sessionContext(
      { db: store.db, runtime: null, signal: controller.signal, onEvent: recorder.onEvent, source: "test" },
      async (session) => {
        const run = runInChild({ module: SLOW, export: "slowAnswer", input: {}, env: scriptedEnv(store, SLOW_REPLY) });
        await recorder.whenNode((node) => node.name === "slow_answer");
        controller.abort("the user pressed stop");
        return { sessionId: session.sessionId, error: await run.result.catch((caught: unknown) => caught) };
      },
    );
    expect(error).toMatchObject({ code: "cancelled", message: "Cancelled: the user pressed stop" });
    expect((await store.db.loadNodes(sessionId)).find((node) => node.name === "slow_answer")?.metadata.status).toBe(
      "cancelled",
    );
  });

  it("timeoutMs stops a child that takes too long and rejects with ChildTimeoutError", async () => {
    // Long enough for the child to start on a busy machine; the reply would take ten minutes.
    const timeoutMs = 8000;
    const { sessionId, error, pid } = await sessionContext(
      { db: store.db, runtime: null, source: "test" },
      async (session) => {
        const run = runInChild({
          module: SLOW,
          export: "slowAnswer",
          input: {},
          env: scriptedEnv(store, SLOW_REPLY),
          timeoutMs,
        });
        return {
          sessionId: session.sessionId,
          error: await run.result.catch((caught: unknown) => caught),
          pid: run.pid as number,
        };
      },
    );
    expect(error).toBeInstanceOf(ChildTimeoutError);
    expect(error).toMatchObject({ code: "child_timeout", timeoutMs });
    expect((error as Error).message).toContain(`slow.ts#slowAnswer did not finish within ${timeoutMs} ms`);
    expect(isRunning(pid)).toBe(false);
    expect((await store.db.loadNodes(sessionId)).find((node) => node.name === "slow_answer")?.metadata.status).toBe(
      "cancelled",
    );
  });

  it("a timeout on a child that ignores it ends in SIGKILL of the group and killed nodes", async () => {
    const recorder = eventRecorder();
    const { sessionId, error, pid, grandchild } = await sessionContext(
      { db: store.db, runtime: null, onEvent: recorder.onEvent, source: "test" },
      async (session) => {
        const run = runInChild({
          module: STUBBORN,
          export: "stubborn",
          input: {},
          env: noProviderEnv(store),
          timeoutMs: 8000,
          graceMs: 200,
        });
        const started = await recorder.whenNode((node, op) => node.name === "start_grandchild" && op === "update");
        return {
          sessionId: session.sessionId,
          error: await run.result.catch((caught: unknown) => caught),
          pid: run.pid as number,
          grandchild: (started.output as { pid: number }).pid,
        };
      },
    );
    expect(error).toBeInstanceOf(ChildTimeoutError);
    await waitFor(() => liveGroupMembers(pid).length === 0, "the process group to be empty");
    expect(isRunning(grandchild)).toBe(false);
    expect((await store.db.loadNodes(sessionId)).find((node) => node.name === "stubborn")?.metadata.status).toBe(
      "killed",
    );
  });

  it("stop() after the child finished does nothing", async () => {
    await sessionContext({ db: store.db, runtime: null, source: "test" }, async () => {
      const run = runInChild({ module: programPath("plain.mjs"), input: { n: 1 }, env: noProviderEnv(store) });
      expect(await run).toEqual({ echoed: { n: 1 } });
      await run.stop();
      expect(await run.result).toEqual({ echoed: { n: 1 } });
    });
  });
});
