// `openprogram sessions usage`, the usage in `sessions show` and the price table in `openprogram config`, over
// sessions the real binary ran against the loopback fake servers of both wire protocols (usage streamed).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
} from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, sessionIdFrom, type CliHome } from "./helpers/cli.js";

let home: CliHome;
let openai: FakeProviderServer;
let anthropic: FakeProviderServer;
let project: string;
const sessions: Record<"openai" | "anthropic", string> = { openai: "", anthropic: "" };

beforeAll(async () => {
  home = createCliHome();
  const reply = { chunks: ["In ", "short."], usage: { input: 1200, output: 30, cached: 200 } };
  openai = await startFakeOpenAIServer(() => reply);
  anthropic = await startFakeAnthropicServer(() => reply);
  project = join(home.home, "project");
  mkdirSync(project);
  const run = async (env: Record<string, string>) => {
    const result = await runCli(["run", `${program("summarize.mjs")}#summarize`, "--input", '{"text":"x"}'], {
      env: home.env({ OPENPROGRAM_MAX_RETRIES: "0", ...env }),
      cwd: project,
    });
    expect(result.stderr).toContain("session: ");
    return sessionIdFrom(result.stderr);
  };
  sessions.openai = await run({ OPENAI_BASE_URL: openai.baseUrl, OPENPROGRAM_MODEL: "gpt-test" });
  sessions.anthropic = await run({
    ANTHROPIC_API_KEY: "k",
    ANTHROPIC_BASE_URL: anthropic.baseUrl,
    OPENPROGRAM_MODEL: "claude-test",
  });
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
  await home.cleanup();
});

describe("openprogram sessions usage", () => {
  it("adds the streamed usage up by model; without a price table, tokens and no cost, saying why", async () => {
    const result = await runCli(["sessions", "usage", "--json"], { env: home.env(), cwd: project });
    expect(result.code).toBe(0);
    const usage = JSON.parse(result.stdout) as {
      rows: Array<{ key: string; calls: number; inputTokens: number; cachedInputTokens: number; cost: unknown }>;
      notes: string[];
    };
    // OpenAI counts the cached tokens in its prompt_tokens; Anthropic reports them beside input_tokens.
    expect(usage.rows.map((row) => [row.key, row.calls, row.inputTokens, row.cachedInputTokens, row.cost])).toEqual([
      ["claude-test", 1, 1400, 200, null],
      ["gpt-test", 1, 1200, 200, null],
    ]);
    expect(usage.notes).toEqual([
      expect.stringMatching(/^claude-test: no cost shown, no price table is configured/),
      expect.stringMatching(/^gpt-test: no cost shown, no price table is configured/),
    ]);
    const text = await runCli(["sessions", "usage"], { env: home.env(), cwd: project });
    expect(text.stdout).toMatch(/^gpt-test +1 +1,200 +200 +30 +- \(no price: gpt-test\)$/m);
    expect(text.stdout).toContain("prices: none configured");
  });

  it("prices tokens from the project's table, by session and by day, and names a model the table misses", async () => {
    writeFileSync(
      join(project, "openprogram.config.json"),
      JSON.stringify({ prices: { "gpt-test": { input: 2, output: 10, cached: 1 } } }),
    );
    const bySession = await runCli(["sessions", "usage", "--by", "session", "--json"], {
      env: home.env(),
      cwd: project,
    });
    const usage = JSON.parse(bySession.stdout) as {
      rows: Array<{ key: string; cost: number | null; unpricedModels: string[] }>;
      total: { cost: unknown };
      prices: { source: string };
      notes: string[];
    };
    const row = (id: string) => usage.rows.find((entry) => entry.key === id);
    expect(row(sessions.openai)?.cost).toBeCloseTo((1000 * 2 + 200 * 1 + 30 * 10) / 1e6, 12);
    expect(row(sessions.anthropic)).toMatchObject({ cost: null, unpricedModels: ["claude-test"] });
    expect(usage.total.cost).toBeNull();
    expect(usage.prices.source).toBe("openprogram.config.json");
    expect(usage.notes).toEqual([
      expect.stringMatching(/^claude-test: no cost shown, "claude-test" is not in the price table/),
    ]);

    const today = new Date().toISOString().slice(0, 10);
    const byDay = await runCli(["sessions", "usage", "--by", "day", "--since", "1d"], {
      env: home.env(),
      cwd: project,
    });
    expect(byDay.stdout).toMatch(new RegExp(`^${today} +2 +2,600 +400 +60 +- \\(no price: claude-test\\)$`, "m"));
    const future = await runCli(["sessions", "usage", "--since", "2999-01-01", "--json"], {
      env: home.env(),
      cwd: project,
    });
    expect(JSON.parse(future.stdout)).toMatchObject({ rows: [], total: { calls: 0 } });
  });

  it("refuses a --since that is not a date, and a price table it cannot use, with exit 2", async () => {
    const since = await runCli(["sessions", "usage", "--since", "yesterday"], { env: home.env(), cwd: project });
    expect(since.code).toBe(2);
    expect(since.stderr).toContain("YYYY-MM-DD");
    const broken = join(home.home, "broken");
    mkdirSync(broken);
    writeFileSync(join(broken, "openprogram.config.json"), JSON.stringify({ prices: { m: { input: -1, output: 1 } } }));
    const table = await runCli(["sessions", "usage"], { env: home.env(), cwd: broken });
    expect(table.code).toBe(2);
    expect(table.stderr).toMatch(/The input price of "m" .* must be a number of dollars per million tokens, 0 or more/);
  });
});

describe("usage in sessions show and the price table in config", () => {
  it("sessions show gives the session's total and each turn's", async () => {
    const result = await runCli(["sessions", "show", sessions.openai], { env: home.env(), cwd: project });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^usage: 1 call, 1,200 in \(200 cached\), 30 out, \$0\.0025$/m);
    expect(result.stdout).toMatch(/^ {2}\S+ \S+ {2}call summarize \(turn_[0-9a-f]+\): 1 call, 1,200 in/m);
    const json = await runCli(["sessions", "show", sessions.openai, "--json"], { env: home.env(), cwd: project });
    expect(JSON.parse(json.stdout)).toMatchObject({
      usage: { total: { calls: 1, inputTokens: 1200 }, turns: [{ label: "call summarize", calls: 1 }] },
    });
  });

  it("config shows where the price table came from, like every other value", async () => {
    const result = await runCli(["config"], { env: home.env(), cwd: project });
    expect(result.stdout).toMatch(/^prices +1 model: gpt-test +openprogram\.config\.json$/m);
    const json = await runCli(["config", "--json"], { env: home.env(), cwd: project });
    expect(JSON.parse(json.stdout)).toMatchObject({
      prices: { source: "openprogram.config.json", table: { "gpt-test": { input: 2, output: 10, cached: 1 } } },
    });
  });
});
