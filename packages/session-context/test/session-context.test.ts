import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  agenticFunction,
  currentCallId,
  currentRuntime,
  currentSession,
  currentTurnId,
  hasSessionContext,
  sessionContext,
  SessionContextMissingError,
  type SessionEvent,
} from "../src/index.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

describe("sessionContext (the source design's S1 checks)", () => {
  it("installs store, turn and runtime inside, and restores them after", async () => {
    const { runtime } = scriptedRuntime([]);
    expect(hasSessionContext()).toBe(false);
    const seen = await sessionContext({ db: store.db, runtime, source: "test" }, async (session) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return { sessionId: currentSession().sessionId, turnId: currentTurnId(), runtime: currentRuntime(), session };
    });
    expect(seen.sessionId).toBe(seen.session.sessionId);
    expect(seen.turnId).toMatch(/^turn_[0-9a-f]{10}$/);
    expect(seen.runtime).toBe(runtime);
    expect(hasSessionContext()).toBe(false);
    expect(() => currentTurnId()).toThrow(SessionContextMissingError);
  });

  it("restores the outer context after an inner one throws, and after the outer throws", async () => {
    await expect(
      sessionContext({ db: store.db, createRuntimeIfNone: false }, async (outer) => {
        await expect(
          sessionContext({ db: store.db, createRuntimeIfNone: false }, async (inner) => {
            expect(inner.sessionId).not.toBe(outer.sessionId);
            throw new Error("inner boom");
          }),
        ).rejects.toThrow("inner boom");
        expect(currentSession().sessionId).toBe(outer.sessionId);
        throw new Error("outer boom");
      }),
    ).rejects.toThrow("outer boom");
    expect(hasSessionContext()).toBe(false);
  });

  it("reuses a passed id (created only the first time) and mints <prefix>_<10 hex> when none is passed", async () => {
    const options = { db: store.db, createRuntimeIfNone: false } as const;
    const first = await sessionContext({ ...options, sessionId: "chosen_id" }, async (session) => session.created);
    const second = await sessionContext({ ...options, sessionId: "chosen_id" }, async (session) => session.created);
    expect([first, second]).toEqual([true, false]);
    const a = await sessionContext({ ...options, idPrefix: "research" }, async (session) => session.sessionId);
    const b = await sessionContext(options, async (session) => session.sessionId);
    expect(a).toMatch(/^research_[0-9a-f]{10}$/);
    expect(b).toMatch(/^session_[0-9a-f]{10}$/);
    expect((await store.db.listSessions()).map((session) => session.id).sort()).toEqual([a, "chosen_id", b].sort());
  });

  it("installs the store even when no provider is configured (runtime null)", async () => {
    // Stubbed and restored in place: process.env assigned a copy would no longer be the process's environment.
    for (const name of [
      "OPENPROGRAM_PROVIDER",
      "OPENAI_API_KEY",
      "OPENAI_BASE_URL",
      "ANTHROPIC_API_KEY",
      "OPENPROGRAM_SCRIPT",
    ])
      vi.stubEnv(name, undefined);
    vi.stubEnv("OPENPROGRAM_HOME", store.home);
    try {
      const result = await sessionContext({ db: store.db }, async (session) => ({
        runtime: session.runtime,
        id: currentSession().sessionId,
      }));
      expect(result.runtime).toBeNull();
      expect(result.id).toMatch(/^session_/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("ends a turn that wrote something with one commit and status idle; a turn that wrote nothing leaves no trace", async () => {
    const { runtime } = scriptedRuntime(["ok"]);
    const events: SessionEvent[] = [];
    const greet = agenticFunction({ name: "greet", doc: "Greet." }, async (_: { who: string }, { runtime: rt }) =>
      rt.exec("hi"),
    );
    const id = await sessionContext(
      { db: store.db, runtime, onEvent: (event) => events.push(event) },
      async (session) => {
        await greet({ who: "you" });
        return session.sessionId;
      },
    );
    const log = await store.db.gitLog(id);
    expect(log.map((entry) => entry.message)).toEqual([
      expect.stringMatching(/^turn turn_[0-9a-f]{10} \(code\)$/),
      "session init",
    ]);
    expect((await store.db.getSession(id))?.status).toBe("idle");
    expect(
      events.filter((event) => event.type === "status").map((event) => (event as { status: string }).status),
    ).toEqual(["running", "idle"]);
    expect(
      events
        .filter((event) => event.type === "node")
        .map((event) => `${(event as { op: string }).op}:${(event as { node: { role: string } }).node.role}`),
      // The llm node is appended running when its request starts and updated once when the reply is in.
    ).toEqual(["append:code", "append:llm", "update:llm", "update:code"]);
    await sessionContext({ db: store.db, runtime, sessionId: id }, async () => undefined);
    expect((await store.db.gitLog(id)).length).toBe(2);
  });

  it("records a failed turn as failed and still commits what it wrote", async () => {
    const boom = agenticFunction({ name: "boom", doc: "Fails." }, async () => {
      throw new TypeError("broken");
    });
    let id = "";
    await expect(
      sessionContext({ db: store.db, createRuntimeIfNone: false }, async (session) => {
        id = session.sessionId;
        await boom({});
      }),
    ).rejects.toThrow("broken");
    expect((await store.db.getSession(id))?.status).toBe("failed");
    expect((await store.db.gitLog(id)).length).toBe(2);
    const [node] = await store.db.loadNodes(id);
    expect(node?.metadata).toMatchObject({ status: "failed", error: { name: "TypeError", message: "broken" } });
  });
});

describe("nesting", () => {
  it("records outer > inner > llm with callers in seq order; a failing inner fails and rethrows", async () => {
    const { runtime } = scriptedRuntime(["inner answer", "second inner"]);
    const inner = agenticFunction(
      { name: "inner", doc: "Inner doc." },
      async ({ n }: { n: number }, { runtime: rt }) => {
        const callId = currentCallId();
        const text = await rt.exec(`n=${n}`);
        expect(currentCallId()).toBe(callId);
        return text;
      },
    );
    const failing = agenticFunction({ name: "failing", doc: "Always fails." }, async () => {
      throw new RangeError("out of range");
    });
    const outer = agenticFunction({ name: "outer", doc: "Outer doc." }, async () => {
      const first = await inner({ n: 1 });
      let caught = "";
      try {
        await failing({});
      } catch (error) {
        caught = (error as Error).message;
      }
      const second = await inner({ n: 2 });
      return { first, second, caught };
    });
    const { sessionId, result } = await sessionContext({ db: store.db, runtime }, async (session) => ({
      sessionId: session.sessionId,
      result: await outer({}),
    }));
    expect(result).toEqual({ first: "inner answer", second: "second inner", caught: "out of range" });
    const nodes = await store.db.loadNodes(sessionId);
    const byId = new Map(nodes.map((node) => [node.id, node]));
    expect(nodes.map((node) => `${node.seq}:${node.role}:${node.name}<${byId.get(node.caller)?.name ?? ""}`)).toEqual([
      "0:code:outer<",
      "1:code:inner<outer",
      "2:llm:scripted<inner",
      "3:code:failing<outer",
      "4:code:inner<outer",
      "5:llm:scripted<inner",
    ]);
    expect(nodes[0]?.predecessor).toBe("ROOT");
    expect(nodes[1]?.predecessor).toBeNull();
    expect(nodes[0]?.metadata).toMatchObject({ status: "completed", doc: "Outer doc.", expose: "io" });
    expect(nodes[0]?.metadata.duration_seconds).toEqual(expect.any(Number));
    expect(nodes[0]?.metadata.finished_at).toEqual(expect.any(Number));
    expect(nodes[3]?.metadata).toMatchObject({
      status: "failed",
      error: { name: "RangeError", message: "out of range" },
    });
    expect(nodes[0]?.output).toEqual(result);
    expect((await store.db.readMeta(sessionId)).head_id).toBe(nodes[0]?.id);
  });
});

describe("no context", () => {
  it("makes agentic functions and askUser throw SessionContextMissingError naming the fix", async () => {
    const fn = agenticFunction({ name: "lonely", doc: "No context." }, async () => "never");
    const error = await fn({}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SessionContextMissingError);
    expect((error as SessionContextMissingError).code).toBe("session_context_missing");
    expect((error as Error).message).toContain("sessionContext(");
    const { askUser } = await import("../src/index.js");
    await expect(askUser("Anyone?")).rejects.toBeInstanceOf(SessionContextMissingError);
  });
});
