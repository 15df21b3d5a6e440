// Issue 36: wall-time budgets at the session scope (the time its turns ran, over its life) and the program scope
// (its turns' time per calendar day in a named time zone), against a real chat-completions server that takes its
// time to answer. Enforced before a call (not sent) and after it (the reply is recorded, the turn stops), and
// resumable once raised.
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, BudgetExceededError, sessionContext, type Budgets, type Runtime } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { describeTurn, resumeTurn } from "../src/entries/turns.js";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer, type TempStore } from "../src/testing/index.js";

/** How long the server takes to answer: past every limit below, which are well under it. */
const SLOW_MS = 600;
const LIMIT_SECONDS = 0.3;

let store: TempStore;
let server: FakeOpenAIServer;
let runtime: Runtime | null;
// A process's first model call loads the token counter and the HTTP client (a third of a second on a busy
// machine): made once before, without budgets, so the quick calls below are quick.
beforeAll(async () => {
  const warm = createTempStore("openprogram-wall-time-warm-");
  const quick = await startFakeOpenAIServer();
  try {
    const model = createRuntime({ provider: "openai", apiKey: "k", baseUrl: quick.baseUrl, model: "m", maxRetries: 0 });
    await sessionContext({ db: warm.db, runtime: model }, () => ask({ q: "warm up" }));
  } finally {
    await quick.close();
    warm.cleanup();
  }
});
beforeEach(async () => {
  store = createTempStore("openprogram-wall-time-");
  server = await startFakeOpenAIServer((_request, index) => ({ delayMs: SLOW_MS, reply: `answer ${index + 1}` }));
  runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
});
afterEach(async () => {
  await server.close();
  store.cleanup();
});

const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (input: { q: string }, { runtime: model }) =>
  model.exec(input.q),
);

/** One quick call, then time spent in code after it (the turn's time after its last model call). */
const askThenThink = agenticFunction(
  { name: "ask_then_think", doc: "Answer, then think it over." },
  async (_input: object, { runtime: model }) => {
    const reply = await model.exec("quick");
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
    return reply;
  },
);

describe("session wall time", () => {
  it("counts the time its turns ran across turns: crossed after a slow reply, refused before the next, resumed once raised", async () => {
    const budgets: Budgets = { session: { seconds: LIMIT_SECONDS } };
    // The first call starts within the budget; its reply takes longer than all of it: recorded, then the turn stops.
    const crossed = await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () =>
      ask({ q: "one" }),
    ).catch((caught: unknown) => caught);
    expect(crossed).toBeInstanceOf(BudgetExceededError);
    expect(crossed).toMatchObject({ code: "budget_exceeded", scope: "session", dimension: "seconds" });
    expect((crossed as BudgetExceededError).spent).toBeGreaterThanOrEqual(SLOW_MS / 1000);
    expect((crossed as Error).message).toContain("The session time budget is exceeded: limit 0.3 s, passed");
    expect((crossed as Error).message).toContain("--max-session-seconds");
    expect(server.requests).toHaveLength(1);
    const replies = (await store.db.loadNodes("s")).filter((node) => node.role === "llm");
    expect(replies.map((node) => node.metadata.status)).toEqual(["completed"]);

    // A new context (as a second process makes) reads the time from the record: the next call is not sent.
    const refused = await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () =>
      ask({ q: "two" }),
    ).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ scope: "session", dimension: "seconds", limit: LIMIT_SECONDS });
    expect((refused as BudgetExceededError).spent).toBeGreaterThanOrEqual(SLOW_MS / 1000);
    expect(server.requests).toHaveLength(1);
    expect(describeTurn({ db: store.db, sessionId: "s" })).toMatchObject({
      status: "failed",
      resumable: true,
      error: { code: "budget_exceeded" },
    });

    // Raised, the stopped turn resumes and finishes.
    const result = await resumeTurn({
      sessionId: "s",
      db: store.db,
      runtime,
      asker: null,
      program: ask,
      budgets: { session: { seconds: 60 } },
    });
    expect(result).toBe("answer 2");
    expect(server.requests).toHaveLength(2);
  });
});

describe("program wall time per day", () => {
  it("is shared by the program's sessions: one turn's slow call uses it up, another session's call is not sent", async () => {
    const name = `slow-${process.pid}-${Date.now()}`;
    const budgets: Budgets = { program: { seconds: LIMIT_SECONDS, name, timeZone: "Asia/Tokyo" } };
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "p1", budgets }, () => ask({ q: "one" })),
    ).rejects.toMatchObject({ scope: "program", dimension: "seconds", limit: LIMIT_SECONDS });
    expect(server.requests).toHaveLength(1);
    const refused = await sessionContext({ db: store.db, runtime, sessionId: "p2", budgets }, () =>
      ask({ q: "two" }),
    ).catch((caught: unknown) => caught);
    expect(refused).toMatchObject({ code: "budget_exceeded", scope: "program", dimension: "seconds" });
    expect((refused as Error).message).toContain('"budgets": { "program": ... }');
    expect(server.requests).toHaveLength(1);
    // Raised (the same program and day), its next turn is served.
    const raised: Budgets = { program: { seconds: 60, name, timeZone: "Asia/Tokyo" } };
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "p2", budgets: raised }, () => ask({ q: "three" })),
    ).resolves.toBe("answer 2");
    expect(server.requests).toHaveLength(2);
  });

  it("counts a turn's time after its last model call: the next turn of the program is refused before it sends", async () => {
    await server.close();
    server = await startFakeOpenAIServer((_request, index) => `answer ${index + 1}`);
    runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    const budgets: Budgets = { program: { seconds: LIMIT_SECONDS, name: `think-${process.pid}-${Date.now()}` } };
    // The quick call starts and ends well within the budget; the code after it passes it, and the turn succeeds.
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "t1", budgets }, () => askThenThink({})),
    ).resolves.toBe("answer 1");
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "t2", budgets }, () => askThenThink({})),
    ).rejects.toMatchObject({ scope: "program", dimension: "seconds" });
    expect(server.requests).toHaveLength(1);
  });
});
