// Token usage and cost: what the providers' streams report lands on each llm node (both wire protocols, real
// loopback servers; and the scripted provider), the per-session total kept at turn end, rebuilt when stale, and
// added up across a store of 1,000 sessions exactly as a scan of every node file adds it up.
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, PriceTableError, sessionContext, type SessionNode } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  describeSessionUsage,
  resolvePriceTable,
  usageAcrossStore,
  USAGE_TOTAL_FILE,
  type PriceTable,
} from "../src/entries/usage.js";
import { dumpsPython } from "../src/json/python-json.js";
import {
  createTempStore,
  PYTHON_SESSIONS_FIXTURE,
  scriptedRuntime,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type TempStore,
} from "../src/testing/index.js";
import { buildUsageStore } from "../bench/usage-store.js";
import { git } from "./helpers.js";

const summarise = agenticFunction(
  { name: "summarise", doc: "Summarise the text in one line." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);

const PRICES: PriceTable = {
  prices: { "m-1": { input: 2, output: 8, cached: 0.5 } },
  source: "openprogram.config.json",
  path: "/project/openprogram.config.json",
};

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-usage-");
});
afterEach(() => store.cleanup());

async function llmNodes(sessionId: string): Promise<SessionNode[]> {
  return (await store.db.loadNodes(sessionId)).filter((node) => node.role === "llm");
}

describe.each([
  { name: "openai" as const, start: startFakeOpenAIServer },
  { name: "anthropic" as const, start: startFakeAnthropicServer },
])("streamed usage from the $name wire protocol", ({ name, start }) => {
  let server: FakeProviderServer;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(() => server.close());

  it("is recorded on each llm node as reported, and totalled per turn, per session and across the store", async () => {
    let call = 0;
    server.setHandler(() => {
      call += 1;
      return { chunks: ["Short ", "answer."], usage: { input: 1000 * call, output: 10 * call, cached: 400 } };
    });
    const runtime = createRuntime({
      provider: name,
      apiKey: "k",
      baseUrl: server.baseUrl,
      model: "m-1",
      maxRetries: 0,
    });
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await summarise({ text: "first" });
      return session.sessionId;
    });
    await sessionContext({ db: store.db, runtime, sessionId }, () => summarise({ text: "second" }));

    // As the provider reported them: Anthropic's input_tokens leave the cache reads out, OpenAI's count them in.
    const nodes = await llmNodes(sessionId);
    expect(nodes.map((node) => node.metadata.usage)).toEqual([
      { inputTokens: 1000, outputTokens: 10, cachedInputTokens: 400 },
      { inputTokens: 2000, outputTokens: 20, cachedInputTokens: 400 },
    ]);
    const input = name === "anthropic" ? [1400, 2400] : [1000, 2000];

    const usage = await describeSessionUsage(sessionId, { db: store.db, prices: PRICES });
    const cost = (promptTokens: number, output: number) => ((promptTokens - 400) * 2 + 400 * 0.5 + output * 8) / 1e6;
    expect(usage.turns.map((turn) => [turn.label, turn.calls, turn.inputTokens, turn.outputTokens])).toEqual([
      ["call summarise", 1, input[0], 10],
      ["call summarise", 1, input[1], 20],
    ]);
    expect(usage.turns[0]?.cost).toBeCloseTo(cost(input[0] as number, 10), 12);
    expect(usage.total).toMatchObject({ calls: 2, inputTokens: input[0]! + input[1]!, cachedInputTokens: 800 });
    expect(usage.total.cost).toBeCloseTo(cost(input[0] as number, 10) + cost(input[1] as number, 20), 12);

    // The total was kept at the turn's end and committed with it: the repository is clean, and the store's
    // total comes from it without reading the nodes.
    const dir = join(store.root, sessionId);
    expect(git(dir, "ls-files", USAGE_TOTAL_FILE)).toBe(USAGE_TOTAL_FILE);
    expect(git(dir, "status", "--porcelain")).toBe("");
    const across = await usageAcrossStore({ db: store.db, prices: PRICES });
    expect(across).toMatchObject({ rebuilt: 0, sessions: 1, rows: [{ key: "m-1", calls: 2 }] });
    expect(across.total.cost).toBeCloseTo(usage.total.cost as number, 12);
  });
});

describe("the per-session usage total", () => {
  it("comes from the scripted provider's counts, and counts calls that reported none", async () => {
    const { runtime } = scriptedRuntime([{ reply: "one", usage: { inputTokens: 50, outputTokens: 3 } }, "two"]);
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await summarise({ text: "a" });
      await summarise({ text: "b" });
      return session.sessionId;
    });
    expect((await llmNodes(sessionId)).map((node) => node.metadata.usage)).toEqual([
      { inputTokens: 50, outputTokens: 3 },
      null,
    ]);
    const across = await usageAcrossStore({ db: store.db, prices: PRICES });
    expect(across.total).toMatchObject({ calls: 2, callsWithoutUsage: 1, inputTokens: 50, outputTokens: 3 });
    // The scripted model has no price: tokens without a cost, and why.
    expect(across.total.cost).toBeNull();
    expect(across.notes).toEqual([
      'scripted: no cost shown, "scripted" is not in the price table (/project/openprogram.config.json)',
    ]);
  });

  it("is rebuilt from the nodes when a turn written elsewhere (Python OpenProgram) or a crash made it stale", async () => {
    const { runtime } = scriptedRuntime([{ reply: "one", usage: { inputTokens: 50, outputTokens: 3 } }]);
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await summarise({ text: "a" });
      return session.sessionId;
    });
    expect((await usageAcrossStore({ db: store.db })).rebuilt).toBe(0);
    // A chat turn as Python OpenProgram writes it: its usage shape, input net of the cache reads.
    const history = join(store.root, sessionId, "history");
    const seq = readdirSync(history).length;
    const python = {
      id: "pyreply00001",
      created_at: 1796094283.45,
      seq,
      role: "llm",
      name: "",
      input: null,
      output: "hi",
      caller: "",
      predecessor: null,
      reads: [],
      metadata: {
        status: "completed",
        usage: { input_tokens: 70, output_tokens: 9, total_tokens: 79, cache_read: 30, cache_create: 0 },
      },
    };
    writeFileSync(join(history, `${String(seq).padStart(4, "0")}-l-pyreply00001.json`), dumpsPython(python));
    const rebuilt = await usageAcrossStore({ db: store.db, by: "model" });
    expect(rebuilt.rebuilt).toBe(1);
    expect(rebuilt.total).toMatchObject({ calls: 2, inputTokens: 150, outputTokens: 12, cachedInputTokens: 30 });
    // The next turn's end brings the total up to date again.
    const next = scriptedRuntime(["two"]).runtime;
    await sessionContext({ db: store.db, runtime: next, sessionId }, () => summarise({ text: "b" }));
    const current = await usageAcrossStore({ db: store.db });
    expect(current.rebuilt).toBe(0);
    expect(current.total).toMatchObject({ calls: 3, callsWithoutUsage: 1, inputTokens: 150, outputTokens: 12 });
  });

  it("is read as missing when it cannot be parsed", async () => {
    const { runtime } = scriptedRuntime([{ reply: "one", usage: { inputTokens: 5, outputTokens: 1 } }]);
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await summarise({ text: "a" });
      return session.sessionId;
    });
    writeFileSync(join(store.root, sessionId, USAGE_TOTAL_FILE), "{torn");
    const across = await usageAcrossStore({ db: store.db });
    expect(across).toMatchObject({ rebuilt: 1, total: { calls: 1, inputTokens: 5 } });
  });
});

describe("usage of sessions Python OpenProgram wrote", () => {
  it("counts their model calls from the nodes, leaves their repositories untouched, and caches them in the root", async () => {
    const python = createTempStore("openprogram-usage-python-", { from: PYTHON_SESSIONS_FIXTURE });
    try {
      const scan = scanNodeFiles(python.root);
      const result = await usageAcrossStore({ db: python.db, by: "session" });
      const sessionIds = readdirSync(python.root).filter((name) => existsSync(join(python.root, name, "meta.json")));
      expect(result.rebuilt).toBe(sessionIds.length);
      expect(Object.fromEntries(result.rows.map((row) => [row.key, [row.calls, row.inputTokens]]))).toEqual(
        Object.fromEntries(Object.entries(scan.session).map(([key, row]) => [key, [row[0], row[1]]])),
      );
      for (const sessionId of sessionIds) expect(git(join(python.root, sessionId), "status", "--porcelain")).toBe("");
      expect(existsSync(join(python.root, ".usage-cache.json"))).toBe(true);
      expect((await usageAcrossStore({ db: python.db })).rebuilt).toBe(0);
    } finally {
      python.cleanup();
    }
  });
});

describe("usage across a store of 1,000 sessions", () => {
  it("matches a scan of every node file, by model, by day and by session, and --since", async () => {
    const shape = await buildUsageStore(store.root, 1000);
    const scan = scanNodeFiles(store.root);
    for (const [index, by] of (["model", "day", "session"] as const).entries()) {
      const result = await usageAcrossStore({ db: store.db, by, prices: { prices: {}, source: "none", path: null } });
      expect(result.sessions).toBe(1000);
      // Only sessions without a current total read their nodes, and only the first time: the store's cache has them.
      expect(result.rebuilt).toBe(index === 0 ? shape.withoutCurrentTotal : 0);
      const rows = Object.fromEntries(
        result.rows.map((row) => [row.key, [row.calls, row.inputTokens, row.outputTokens, row.cachedInputTokens]]),
      );
      expect(rows).toEqual(scan[by]);
      expect(result.notes[0]).toMatch(/no price table is configured/);
    }
    const since = await usageAcrossStore({ db: store.db, by: "day", since: "2026-12-20" });
    expect(since.rows.map((row) => row.key)).toEqual(
      Object.keys(scan.day)
        .filter((day) => day >= "2026-12-20")
        .sort(),
    );
    await expect(usageAcrossStore({ db: store.db, since: "last tuesday" })).rejects.toThrow(/YYYY-MM-DD/);
  });
});

describe("the price table", () => {
  it("comes from the project's openprogram.config.json, else the user's config.json, else none", () => {
    const project = join(store.home, "project");
    const env = { OPENPROGRAM_HOME: store.home };
    expect(resolvePriceTable(env, store.home)).toMatchObject({ source: "none", prices: {} });
    writeFileSync(join(store.home, "config.json"), JSON.stringify({ prices: { a: { input: 1, output: 2 } } }));
    expect(resolvePriceTable(env, store.home)).toMatchObject({ source: "config.json", prices: { a: { input: 1 } } });
    git(store.home, "init", "-q", project);
    writeFileSync(
      join(project, "openprogram.config.json"),
      JSON.stringify({ prices: { b: { input: 3, output: 4, cached: 1 } } }),
    );
    expect(resolvePriceTable(env, project)).toMatchObject({
      source: "openprogram.config.json",
      prices: { b: { input: 3, output: 4, cached: 1 } },
    });
  });

  it("refuses an entry it cannot use, naming the model, the field and the file", () => {
    const env = { OPENPROGRAM_HOME: store.home };
    writeFileSync(
      join(store.home, "config.json"),
      JSON.stringify({ prices: { "gpt-x": { input: "cheap", output: 1 } } }),
    );
    expect(() => resolvePriceTable(env, store.home)).toThrow(PriceTableError);
    expect(() => resolvePriceTable(env, store.home)).toThrow(
      /The input price of "gpt-x" \("prices" in .*config\.json\) must be a number of dollars per million tokens/,
    );
  });
});

/** Token counts by model, day and session from reading every node file, each provider's convention applied here. */
function scanNodeFiles(root: string): Record<"model" | "day" | "session", Record<string, number[]>> {
  const result = { model: {}, day: {}, session: {} } as Record<"model" | "day" | "session", Record<string, number[]>>;
  for (const session of readdirSync(root)) {
    const history = join(root, session, "history");
    if (!existsSync(history)) continue;
    for (const file of readdirSync(history)) {
      const node = JSON.parse(readFileSync(join(history, file), "utf8")) as SessionNode;
      // Python's compaction summaries are llm nodes that record no model call.
      if (node.role !== "llm" || node.metadata.compaction === true || node.name.startsWith("context/")) continue;
      const usage = (node.metadata.usage ?? {}) as Record<string, number>;
      const cached = usage.cachedInputTokens ?? usage.cache_read ?? 0;
      const input =
        "input_tokens" in usage
          ? (usage.input_tokens ?? 0) + cached
          : (usage.inputTokens ?? 0) + (node.metadata.provider === "anthropic" ? cached : 0);
      const output = usage.outputTokens ?? usage.output_tokens ?? 0;
      const model = node.name || "(unknown model)";
      const day = new Date(node.created_at * 1000).toISOString().slice(0, 10);
      for (const [by, key] of [
        ["model", model],
        ["day", day],
        ["session", session],
      ] as const) {
        const row = (result[by][key] ??= [0, 0, 0, 0]);
        row[0]! += 1;
        row[1]! += input;
        row[2]! += output;
        row[3]! += cached;
      }
    }
  }
  return result;
}
