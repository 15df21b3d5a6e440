import { agenticFunction, sessionContext, type SessionNode } from "@openprogram/session-context";
import { describe, expect, it } from "vitest";
import { ChildProcessError, runInChild } from "../src/index.js";
import { eventRecorder, isRunning, noProviderEnv, programPath, useTempStore } from "./helpers.js";

const CRASH = programPath("crash.ts");

describe("crashes: the run rejects with what happened and the session stays usable", () => {
  const store = useTempStore();

  /** A crashing run in its own turn of a new session; returns the error and the session. */
  async function crashTurn(
    exportName: string,
    during?: (run: ReturnType<typeof runInChild>, firstNode: SessionNode) => void,
  ): Promise<{ sessionId: string; error: unknown; pid: number }> {
    const recorder = eventRecorder();
    const host = agenticFunction({ name: "host", doc: "Run a program in a child." }, async () => {
      const run = runInChild({
        module: CRASH,
        export: exportName,
        input: { dataset: "mnist" },
        env: noProviderEnv(store),
      });
      if (during) during(run, await recorder.whenNode((node) => node.name !== "host"));
      return { error: await run.result.catch((caught: unknown) => caught), pid: run.pid as number };
    });
    return sessionContext(
      { db: store.db, runtime: null, onEvent: recorder.onEvent, source: "test" },
      async (session) => ({ sessionId: session.sessionId, ...(await host({})) }),
    );
  }

  /** The next turn of the session runs (in-process and in a child) and leaves it idle and readable. */
  async function expectNextTurnWorks(sessionId: string): Promise<void> {
    const next = agenticFunction({ name: "next_turn", doc: "Carry on." }, async () => "carried on");
    const outputs = await sessionContext({ db: store.db, sessionId, runtime: null, source: "test" }, async () => [
      await next({}),
      await runInChild({ module: programPath("plain.mjs"), input: { again: true }, env: noProviderEnv(store) }),
    ]);
    expect(outputs).toEqual(["carried on", { echoed: { again: true } }]);
    const history = await store.db.readHistory(sessionId);
    expect(history.problems).toEqual([]);
    expect(history.nodes.map((node) => node.seq)).toEqual(history.nodes.map((_, index) => index));
    expect((await store.db.getSession(sessionId))?.status).toBe("idle");
  }

  it("a child that throws rejects with its error: class name, code and message", async () => {
    const { sessionId, error } = await crashTurn("throwsOwnError");
    expect(error).toMatchObject({
      name: "DatasetMissingError",
      code: "dataset_missing",
      message: "dataset mnist is not on disk",
    });
    const node = (await store.db.loadNodes(sessionId)).find((candidate) => candidate.name === "throws_own_error");
    expect(node?.metadata).toMatchObject({
      status: "failed",
      error: { name: "DatasetMissingError", code: "dataset_missing" },
    });
    await expectNextTurnWorks(sessionId);
  });

  it("process.exit(3) rejects with ChildProcessError naming the exit code; the unfinished call is recorded interrupted", async () => {
    const { sessionId, error, pid } = await crashTurn("exitsWithThree");
    expect(error).toBeInstanceOf(ChildProcessError);
    expect(error).toMatchObject({ code: "child_process_failed", pid, exit: { code: 3, signal: null } });
    expect((error as Error).message).toContain(
      `crash.ts#exitsWithThree (pid ${pid}) exited with code 3 before reporting a result`,
    );
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.name === "exits_with_three")?.metadata.status).toBe("interrupted");
    expect(nodes.find((node) => node.name === "exits_with_three")?.caller).toBe(
      nodes.find((node) => node.name === "host")?.id,
    );
    await expectNextTurnWorks(sessionId);
  });

  it("death by a signal rejects with ChildProcessError naming the signal; the unfinished call is recorded killed", async () => {
    const { sessionId, error, pid } = await crashTurn("waitsForever", (run) => {
      // Someone else (an operator, the OOM killer) ends the child.
      process.kill(run.pid as number, "SIGTERM");
    });
    expect(error).toBeInstanceOf(ChildProcessError);
    expect(error).toMatchObject({ exit: { code: null, signal: "SIGTERM" } });
    expect((error as Error).message).toContain("was killed by SIGTERM before reporting a result");
    expect(isRunning(pid)).toBe(false);
    expect((await store.db.loadNodes(sessionId)).find((node) => node.name === "waits_forever")?.metadata.status).toBe(
      "killed",
    );
    await expectNextTurnWorks(sessionId);
  });

  it("a result JSON cannot carry is an error that says so", async () => {
    const { sessionId, error, pid } = await crashTurn("returnsBigint");
    expect(error).toBeInstanceOf(ChildProcessError);
    expect(error).toMatchObject({ code: "child_process_failed", pid, exit: { code: 1, signal: null } });
    expect((error as Error).message).toMatch(
      /result of returnsBigint is not JSON-serialisable .*return plain JSON data/,
    );
    await expectNextTurnWorks(sessionId);
  });
});
