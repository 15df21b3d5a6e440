// Budgets (issue 36): what checking budgets costs per model call, beside the same call without budgets, measured
// in one run: the check alone (reserve before, settle after; the provider answers at once) with no budget, with
// exec, turn, session and program budgets kept in memory (a single server), and with the session and program kept
// in PostgreSQL (a cluster: a fresh database on the local server, dropped after); then a whole exec through the
// core (scripted provider, the store on this disk) with and without budgets. Then the wall-time budgets (session
// and program seconds; a program's are added to its ledger at each check) and the provider limits (maxConcurrent and
// requestsPerMinute: in this process's memory, and in PostgreSQL as `serve --postgres` counts them across replicas).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { iterations, median, report, sample } from "@openprogram/bench-kit";
import { agenticFunction, sessionContext, type Budgets } from "@openprogram/session-context";
import { CallBudget, ProviderLimits, spendWithin, TurnBudget } from "@openprogram/session-context/budgets";
import {
  ModelRuntime,
  ScriptedProvider,
  type ModelRequest,
  type ModelResponse,
} from "@openprogram/session-context/runtime";
import { openStore } from "@openprogram/session-context/store";
import pg from "pg";
import { PostgresBudgetLedger } from "../src/cluster/budget-ledger.js";
import { PostgresCapacity } from "../src/cluster/capacity.js";
import { migrate } from "../src/cluster/migrations.js";
import { createPool } from "../src/cluster/pool.js";

const PACKAGE = "@openprogram/dispatcher";
const ADMIN_URL = process.env.OPENPROGRAM_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const CALLS = iterations(2000);
const EXECS = iterations(200);
const NEVER = new AbortController().signal;

/** A request of a grown conversation: a system message and 20 turns of a few hundred characters. */
const REQUEST: ModelRequest = {
  model: "gpt-bench",
  maxTokens: 500,
  messages: [
    { role: "system", content: "Answer the question, briefly and exactly." },
    ...Array.from({ length: 20 }, (_, index) => ({
      role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: `Message ${index}: ${"the quick brown fox jumps over the lazy dog ".repeat(8)}`,
    })),
  ],
};
const RESPONSE: ModelResponse = { text: "ok", model: "gpt-bench", usage: { inputTokens: 900, outputTokens: 20 } };
const LARGE = { tokens: 1e15, cost: 1e12 };
const PRICES = { prices: { "gpt-bench": { input: 0.15, output: 0.6 } }, source: "bench", path: null };

function budgetsWith(ledger?: PostgresBudgetLedger): Budgets {
  return {
    exec: { tokens: LARGE.tokens },
    turn: { tokens: LARGE.tokens, cost: LARGE.cost, seconds: 1e9 },
    session: { tokens: LARGE.tokens, cost: LARGE.cost },
    program: { tokens: LARGE.tokens, cost: LARGE.cost, name: "bench", timeZone: "Europe/Oslo" },
    prices: PRICES,
    ...(ledger ? { ledger } : {}),
  };
}

/** Wall time only: the session's turns' seconds and the program's per day, far from their limits. */
function timeBudgetsWith(ledger?: PostgresBudgetLedger): Budgets {
  return {
    session: { seconds: 1e9 },
    program: { seconds: 1e9, name: "bench-time", timeZone: "Europe/Oslo" },
    ...(ledger ? { ledger } : {}),
  };
}

/** Capacity far from full: every call takes a slot and counts in its minute. */
const LIMITS = { "openai/gpt-bench": { maxConcurrent: 1000, requestsPerMinute: 1e9 } };

/** Per call: the exec's budget made, the request reserved, sent (answered at once) and settled. */
function checkedCall(
  db: ReturnType<typeof openStore>,
  budgets: Budgets | null,
  limits: ProviderLimits | null = null,
): () => Promise<unknown> {
  const turn = budgets ? new TurnBudget(budgets, { db, sessionId: "bench", program: () => null }) : null;
  const context = { budget: turn, limits, sessionId: "bench" };
  return async () => {
    const budget = CallBudget.of(context, undefined, "openai");
    return spendWithin(budget, REQUEST, NEVER, () => Promise.resolve(RESPONSE));
  };
}

async function main(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-budgets-"));
  const name = `openprogram_bench_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 4, () => undefined);
  try {
    const client = await pool.connect();
    await migrate(client);
    client.release();
    const db = openStore({ root: join(home, "sessions") });
    const ledger = new PostgresBudgetLedger(pool, url.toString(), "bench", 10_000);

    const none = checkedCall(db, null);
    const memory = checkedCall(db, budgetsWith());
    const shared = checkedCall(db, budgetsWith(ledger));
    const noneTimes: number[] = [];
    const memoryTimes: number[] = [];
    const sharedTimes: number[] = [];
    // Alternating rounds, so that neither variant always runs warmer.
    for (let round = 0; round < 10; round++) {
      noneTimes.push(...(await sample(none, { iterations: CALLS / 10, warmup: 20 })));
      memoryTimes.push(...(await sample(memory, { iterations: CALLS / 10, warmup: 20 })));
      sharedTimes.push(...(await sample(shared, { iterations: CALLS / 40, warmup: 5 })));
    }
    const base = { package: PACKAGE, unit: "µs" as const };
    const us = (values: number[]) => median(values) * 1000;
    report({
      ...base,
      metric: "budget check per model call, no budget",
      median: us(noneTimes),
      samples: noneTimes.length,
    });
    report({
      ...base,
      metric: "budget check per model call, exec+turn+session+program in memory (single server)",
      median: us(memoryTimes),
      baseline: us(noneTimes),
      baselineLabel: "no budget",
      samples: memoryTimes.length,
    });
    report({
      ...base,
      metric: "budget check per model call, session+program in PostgreSQL (cluster)",
      median: us(sharedTimes),
      baseline: us(memoryTimes),
      baselineLabel: "in memory",
      samples: sharedTimes.length,
    });

    // Wall time, and provider capacity: each beside the call without budgets, in memory and in PostgreSQL.
    const capacity = new PostgresCapacity(pool, url.toString(), "bench", 10_000);
    const variants = {
      timeMemory: checkedCall(db, timeBudgetsWith()),
      timeShared: checkedCall(db, timeBudgetsWith(ledger)),
      limitsMemory: checkedCall(db, null, new ProviderLimits(LIMITS)),
      limitsShared: checkedCall(db, null, new ProviderLimits(LIMITS, { store: capacity })),
    };
    const times = { none: [] as number[], timeMemory: [] as number[], timeShared: [] as number[] };
    const limitTimes = { limitsMemory: [] as number[], limitsShared: [] as number[] };
    for (let round = 0; round < 10; round++) {
      times.none.push(...(await sample(none, { iterations: CALLS / 10, warmup: 20 })));
      times.timeMemory.push(...(await sample(variants.timeMemory, { iterations: CALLS / 10, warmup: 20 })));
      times.timeShared.push(...(await sample(variants.timeShared, { iterations: CALLS / 40, warmup: 5 })));
      limitTimes.limitsMemory.push(...(await sample(variants.limitsMemory, { iterations: CALLS / 10, warmup: 20 })));
      limitTimes.limitsShared.push(...(await sample(variants.limitsShared, { iterations: CALLS / 40, warmup: 5 })));
    }
    report({
      ...base,
      metric: "budget check per model call, session+program wall time in memory (single server)",
      median: us(times.timeMemory),
      baseline: us(times.none),
      baselineLabel: "no budget",
      samples: times.timeMemory.length,
    });
    report({
      ...base,
      metric: "budget check per model call, program wall time in PostgreSQL (cluster)",
      median: us(times.timeShared),
      baseline: us(times.timeMemory),
      baselineLabel: "in memory",
      samples: times.timeShared.length,
    });
    report({
      ...base,
      metric: "provider limits per model call, maxConcurrent+requestsPerMinute in memory (single server)",
      median: us(limitTimes.limitsMemory),
      baseline: us(times.none),
      baselineLabel: "no limits",
      samples: limitTimes.limitsMemory.length,
    });
    report({
      ...base,
      metric: "provider limits per model call, counted in PostgreSQL (cluster)",
      median: us(limitTimes.limitsShared),
      baseline: us(limitTimes.limitsMemory),
      baselineLabel: "in memory",
      samples: limitTimes.limitsShared.length,
    });

    // A whole exec (an llm node recorded, the turn committed) with and without budgets, alternating.
    const replies = Array.from({ length: 4 * EXECS + 40 }, () => ({
      reply: "ok",
      usage: { inputTokens: 900, outputTokens: 20 },
    }));
    const runtime = new ModelRuntime(new ScriptedProvider(replies), "gpt-bench", {}, null);
    const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (_input: object, { runtime: model }) =>
      model.exec("The question."),
    );
    const exec = (budgets: Budgets | undefined) => () =>
      sessionContext({ db, runtime, ...(budgets ? { budgets } : {}) }, () => ask({}));
    const plain: number[] = [];
    const budgeted: number[] = [];
    for (let round = 0; round < 10; round++) {
      plain.push(...(await sample(exec(undefined), { iterations: EXECS / 10, warmup: 2 })));
      budgeted.push(...(await sample(exec(budgetsWith()), { iterations: EXECS / 10, warmup: 2 })));
    }
    report({
      package: PACKAGE,
      unit: "ms",
      metric: "a turn of one exec with budgets (new session, scripted provider)",
      median: median(budgeted),
      baseline: median(plain),
      baselineLabel: "the same without budgets",
      samples: budgeted.length,
    });
  } finally {
    await pool.end().catch(() => undefined);
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
    rmSync(home, { recursive: true, force: true });
  }
}

await main();
