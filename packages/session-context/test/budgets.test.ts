import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agenticFunction,
  BudgetExceededError,
  InvalidBudgetError,
  sessionContext,
  tool,
  UnpricedModelError,
  type Budgets,
  type SessionNode,
} from "../src/index.js";
import { describeTurn, resumeTurn } from "../src/entries/turns.js";
import type { PriceTable } from "../src/entries/usage.js";
import type { ScriptEntry } from "../src/providers/scripted.js";
import { readFileSync, writeFileSync } from "node:fs";
import { contextCarrierEnv } from "../src/entries/relay.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";
import { childScript, runTsChild } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-budgets-");
});
afterEach(() => store.cleanup());

const counter = tool({
  name: "count",
  description: "Counts one more.",
  input: z.object({}),
  execute: () => "counted",
});

/** A reply that asks for the tool again, reporting `tokens` input tokens and none out. */
function loopReply(tokens: number): ScriptEntry {
  return { reply: "", toolCalls: [{ name: "count", arguments: {} }], usage: { inputTokens: tokens, outputTokens: 0 } };
}

const loopForever = agenticFunction(
  { name: "loop_forever", doc: "Count until told to stop." },
  async (input: { maxTokens?: number }, { runtime }) =>
    runtime.exec("Count.", {
      tools: [counter],
      budget: { tokens: 2500 },
      ...(input.maxTokens ? { maxTokens: input.maxTokens } : {}),
    }),
);

const NO_PRICES: PriceTable = { prices: {}, source: "none", path: null };
const PRICES: PriceTable = { prices: { scripted: { input: 1, output: 2 } }, source: "test", path: null };

async function nodesOf(sessionId: string): Promise<SessionNode[]> {
  return store.db.loadNodes(sessionId);
}

describe("exec budgets", () => {
  it("stop a tool loop after the call that crossed them: exactly 3 requests of 1000 tokens under 2500", async () => {
    const { runtime, provider } = scriptedRuntime(Array.from({ length: 10 }, () => loopReply(1000)));
    const error = await sessionContext(
      { db: store.db, runtime, sessionId: "loop", budgets: { prices: NO_PRICES } },
      () => loopForever({}),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    expect(error).toMatchObject({
      code: "budget_exceeded",
      scope: "exec",
      dimension: "tokens",
      limit: 2500,
      spent: 3000,
    });
    expect((error as Error).message).toContain("exec(..., { budget })");
    expect(provider.requests).toHaveLength(3);
    // The third reply is recorded (it was paid for); its tool calls did not run.
    const nodes = await nodesOf("loop");
    const replies = nodes.filter((node) => node.role === "llm");
    expect(replies.map((node) => node.metadata.status)).toEqual(["completed", "completed", "completed"]);
    expect(nodes.filter((node) => node.name === "count")).toHaveLength(2);
  });

  it("refuse a request whose estimate (input counted plus maxTokens) would cross: not sent, recorded as failed", async () => {
    const { runtime, provider } = scriptedRuntime(Array.from({ length: 10 }, () => loopReply(1000)));
    const error = await sessionContext({ db: store.db, runtime, sessionId: "estimate" }, () =>
      loopForever({ maxTokens: 600 }),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "budget_exceeded", scope: "exec", dimension: "tokens", spent: 2000 });
    expect((error as BudgetExceededError).needed).toBeGreaterThan(600);
    expect(provider.requests).toHaveLength(2);
    const failed = (await nodesOf("estimate")).filter(
      (node) => node.metadata.status === "failed" && node.role === "llm",
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]?.metadata.error).toMatchObject({ code: "budget_exceeded" });
  });
});

describe("turn, session and program budgets", () => {
  const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (input: { q: string }, { runtime }) =>
    runtime.exec(input.q),
  );
  const twice = agenticFunction({ name: "twice", doc: "Ask twice." }, async (_input: object, { runtime }) => {
    const first = await runtime.exec("first");
    const second = await runtime.exec("second");
    return `${first} / ${second}`;
  });
  const used = (tokens: number, reply = "ok"): ScriptEntry => ({
    reply,
    usage: { inputTokens: tokens, outputTokens: 0 },
  });

  it("a session budget holds across turns: what earlier turns recorded counts, from the store", async () => {
    const { runtime, provider } = scriptedRuntime([used(600), used(600), used(600)]);
    const budgets: Budgets = { session: { tokens: 1000 } };
    await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () => ask({ q: "one" }));
    // A new context (as a second process would make) starts from the record: 600 spent, the next reply crosses.
    const error = await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () =>
      ask({ q: "two" }),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ scope: "session", dimension: "tokens", limit: 1000, spent: 1200 });
    expect((error as Error).message).toContain("--max-session-tokens");
    // Now 1200 are spent: a third turn is refused before it sends anything.
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () => ask({ q: "three" })),
    ).rejects.toMatchObject({ scope: "session", spent: 1200 });
    expect(provider.requests).toHaveLength(2);
    // The turn is committed and says a budget stopped it.
    const log = execFileSync("git", ["log", "--format=%s"], { cwd: join(store.root, "s"), encoding: "utf8" });
    expect(log).toContain("stopped by a budget");
  });

  it("a cost budget on a model without a price fails before the call, naming the model", async () => {
    const { runtime, provider } = scriptedRuntime([used(10)]);
    const error = await sessionContext(
      { db: store.db, runtime, sessionId: "unpriced", budgets: { turn: { cost: 1 }, prices: NO_PRICES } },
      () => ask({ q: "one" }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnpricedModelError);
    expect(error).toMatchObject({ code: "budget_unpriced_model", model: "scripted", scope: "turn" });
    expect(provider.requests).toHaveLength(0);
  });

  it("a cost budget prices what each call used: $1 per million input tokens, stopped past $0.0015", async () => {
    const { runtime, provider } = scriptedRuntime([used(1000), used(1000), used(1000)]);
    const error = await sessionContext(
      { db: store.db, runtime, sessionId: "priced", budgets: { turn: { cost: 0.0015 }, prices: PRICES } },
      () => twice({}),
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ scope: "turn", dimension: "cost", limit: 0.0015, spent: 0.002 });
    expect(provider.requests).toHaveLength(2);
  });

  it("a program budget is per day and shared by the program's sessions in this process", async () => {
    const { runtime, provider } = scriptedRuntime([used(700), used(700), used(700)]);
    const name = `program-${process.pid}-${Date.now()}`;
    const budgets: Budgets = { program: { tokens: 1000, name, timeZone: "Europe/Oslo" } };
    await sessionContext({ db: store.db, runtime, sessionId: "p1", budgets }, () => ask({ q: "one" }));
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "p2", budgets }, () => ask({ q: "two" })),
    ).rejects.toMatchObject({ scope: "program", spent: 1400, limit: 1000 });
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "p3", budgets }, () => ask({ q: "three" })),
    ).rejects.toMatchObject({ scope: "program" });
    expect(provider.requests).toHaveLength(2);
  });

  it("a turn's wall time: a limit already passed refuses the next call", async () => {
    const { runtime, provider } = scriptedRuntime([used(1)]);
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "slow", budgets: { turn: { seconds: 0 } } }, () =>
        ask({ q: "one" }),
      ),
    ).rejects.toMatchObject({ scope: "turn", dimension: "seconds" });
    expect(provider.requests).toHaveLength(0);
  });

  it("a turn stopped by its budget resumes after the budget is raised: finished calls come from the record", async () => {
    const { runtime, provider } = scriptedRuntime([used(990, "A"), used(800, "B")]);
    await expect(
      sessionContext({ db: store.db, runtime, sessionId: "r", budgets: { turn: { tokens: 1000 } } }, () => twice({})),
    ).rejects.toMatchObject({ code: "budget_exceeded", scope: "turn" });
    // The first call fit; the second's estimate did not, so it was not sent.
    expect(provider.requests).toHaveLength(1);
    expect(describeTurn({ db: store.db, sessionId: "r" })).toMatchObject({
      status: "failed",
      resumable: true,
      resumeHelps: true,
      error: { code: "budget_exceeded" },
    });
    const result = await resumeTurn({
      sessionId: "r",
      db: store.db,
      runtime,
      asker: null,
      program: twice,
      budgets: { turn: { tokens: 5000 } },
    });
    expect(result).toBe("A / B");
    expect(provider.requests).toHaveLength(2);
  });

  it("refuses budgets that are not ones, before anything runs", async () => {
    const { runtime } = scriptedRuntime([]);
    for (const budgets of [
      { turn: { tokens: -1 } },
      { day: { tokens: 1 } },
      { session: { timeZone: "UTC" } },
      { program: { timeZone: "Mars/Base" } },
    ])
      await expect(
        sessionContext({ db: store.db, runtime, budgets: budgets as Budgets }, () => ask({ q: "x" })),
      ).rejects.toBeInstanceOf(InvalidBudgetError);
  });

  it("a child process joining the turn (run --isolate) is held to the budgets the turn carried", async () => {
    const script = join(store.home, "replies.json");
    const log = join(store.home, "requests.jsonl");
    writeFileSync(script, JSON.stringify([used(600), used(600), used(600)]));
    const outcome = await sessionContext(
      { db: store.db, runtime: null, sessionId: "isolated", budgets: { turn: { tokens: 1000 } } },
      async () => {
        const child = await runTsChild(childScript("budgeted-child.ts"), [], {
          ...contextCarrierEnv(),
          OPENPROGRAM_HOME: store.home,
          OPENPROGRAM_PROVIDER: "scripted",
          OPENPROGRAM_SCRIPT: script,
          OPENPROGRAM_SCRIPT_LOG: log,
        });
        return JSON.parse(child.stdout) as Record<string, unknown>;
      },
    );
    expect(outcome).toEqual({ ok: false, code: "budget_exceeded", scope: "turn", spent: 1200 });
    expect(readFileSync(log, "utf8").trim().split("\n")).toHaveLength(2);
  });
});
