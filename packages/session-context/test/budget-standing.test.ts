import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, BudgetExceededError, chat, sessionContext, type Budgets } from "../src/index.js";
import { budgetOfMessage, describeBudgets } from "../src/entries/budgets.js";
import type { PriceTable } from "../src/entries/usage.js";
import type { ScriptEntry } from "../src/providers/scripted.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-budget-standing-");
});
afterEach(() => store.cleanup());

const PRICES: PriceTable = { prices: { scripted: { input: 1, output: 2 } }, source: "test", path: null };
const used = (input: number, output = 0): ScriptEntry => ({
  reply: "ok",
  usage: { inputTokens: input, outputTokens: output },
});
const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (input: { q: string }, { runtime }) =>
  runtime.exec(input.q),
);

describe("describeBudgets", () => {
  it("shows each configured limit beside what the latest turn, the session and the program's day spent", async () => {
    const { runtime } = scriptedRuntime([used(300, 100), used(200, 50)]);
    const name = `standing-${process.pid}-${Date.now()}`;
    const budgets: Budgets = {
      exec: { tokens: 5000 },
      turn: { tokens: 1000, seconds: 60 },
      session: { tokens: 2000, cost: 1 },
      program: { tokens: 10_000, name, timeZone: "Europe/Oslo" },
      prices: PRICES,
    };
    await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () => ask({ q: "one" }));
    await sessionContext({ db: store.db, runtime, sessionId: "s", budgets }, () => ask({ q: "two" }));
    const { standings, stoppedBy } = await describeBudgets("s", { db: store.db, budgets });
    expect(stoppedBy).toBeNull();
    const row = (scope: string, dimension: string) =>
      standings.find((entry) => entry.scope === scope && entry.dimension === dimension);
    expect(standings.map((entry) => `${entry.scope}/${entry.dimension}`)).toEqual([
      "exec/tokens",
      "turn/tokens",
      "turn/seconds",
      "session/tokens",
      "session/cost",
      "program/tokens",
    ]);
    expect(row("exec", "tokens")).toMatchObject({ limit: 5000, spent: null, stoppedTurn: false });
    expect(row("turn", "tokens")).toMatchObject({ limit: 1000, spent: 250, over: "the latest turn" });
    const seconds = row("turn", "seconds")?.spent ?? -1;
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(60);
    expect(row("session", "tokens")).toMatchObject({ limit: 2000, spent: 650, over: "this session" });
    // $1 per million in, $2 per million out: 500 in and 150 out.
    expect(row("session", "cost")?.spent).toBeCloseTo((500 * 1 + 150 * 2) / 1e6, 12);
    expect(row("program", "tokens")).toMatchObject({ limit: 10_000, spent: 650 });
    expect(row("program", "tokens")?.over).toMatch(
      new RegExp(`^program ${name} on \\d{4}-\\d{2}-\\d{2} \\(Europe/Oslo\\)$`),
    );
  });

  it("names the budget that stopped the latest turn, and only while it is the latest", async () => {
    const { runtime } = scriptedRuntime([used(600), used(600), used(100)]);
    const budgets: Budgets = { turn: { tokens: 5000 }, session: { tokens: 1000 } };
    await sessionContext({ db: store.db, runtime, sessionId: "b", budgets }, () => ask({ q: "one" }));
    const error = await sessionContext({ db: store.db, runtime, sessionId: "b", budgets }, () =>
      ask({ q: "two" }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BudgetExceededError);
    const stopped = await describeBudgets("b", { db: store.db, budgets });
    expect(stopped.stoppedBy).toMatchObject({
      scope: "session",
      dimension: "tokens",
      message: (error as Error).message,
    });
    expect(stopped.standings.map((entry) => [entry.scope, entry.stoppedTurn, entry.spent])).toEqual([
      ["turn", false, 600],
      ["session", true, 1200],
    ]);
    // Raised, a next turn runs: the stop belongs to an earlier turn now.
    const raised: Budgets = { turn: { tokens: 5000 }, session: { tokens: 5000 } };
    await sessionContext({ db: store.db, runtime, sessionId: "b", budgets: raised }, () => ask({ q: "three" }));
    const after = await describeBudgets("b", { db: store.db, budgets: raised });
    expect(after.stoppedBy).toBeNull();
    expect(after.standings.map((entry) => [entry.scope, entry.stoppedTurn, entry.spent])).toEqual([
      ["turn", false, 100],
      ["session", false, 1300],
    ]);
  });

  it("names the budget a chat reply took past its limit: its llm node notes it", async () => {
    const { runtime } = scriptedRuntime([used(600), used(600)]);
    const budgets: Budgets = { session: { tokens: 1000 } };
    await sessionContext({ db: store.db, runtime, sessionId: "c", budgets }, () => chat("one"));
    const error = await sessionContext({ db: store.db, runtime, sessionId: "c", budgets }, () => chat("two")).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(BudgetExceededError);
    const replies = (await store.db.loadNodes("c")).filter((node) => node.role === "llm");
    expect(replies.map((node) => [node.output, node.metadata.status, node.metadata.stopped_by_budget ?? null])).toEqual(
      [
        ["ok", "completed", null],
        [
          "ok",
          "completed",
          { name: "BudgetExceededError", code: "budget_exceeded", message: (error as Error).message },
        ],
      ],
    );
    const { stoppedBy, standings } = await describeBudgets("c", { db: store.db, budgets });
    expect(stoppedBy).toMatchObject({ scope: "session", dimension: "tokens" });
    expect(standings).toMatchObject([{ scope: "session", spent: 1200, stoppedTurn: true }]);
  });

  it("reads scope and dimension back from every BudgetExceededError message", () => {
    for (const scope of ["exec", "turn", "session", "program"] as const)
      for (const dimension of ["tokens", "cost", "seconds"] as const)
        expect(budgetOfMessage(new BudgetExceededError(scope, dimension, 10, 12, 3).message)).toEqual({
          scope,
          dimension,
        });
    expect(budgetOfMessage("The model is unavailable.")).toBeNull();
  });
});
