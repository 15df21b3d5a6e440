// Budgets through the real binary (issue 36): flags and openprogram.config.json, the exit code and message of a
// turn a budget stopped, and `openprogram resume` with the budget raised, against a real chat-completions server.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, sessionIdFrom, type CliHome } from "./helpers/cli.js";

let home: CliHome;
let server: FakeOpenAIServer;

beforeAll(() => {
  home = createCliHome();
});
afterAll(() => home.cleanup());
beforeEach(async () => {
  // Every reply reports 600 input tokens: two of them cross a 1000-token budget.
  server = await startFakeOpenAIServer((_request, index) => ({
    chunks: [`answer ${index + 1}`],
    usage: { input: 600, output: 0 },
  }));
});
afterEach(() => server.close());

function env(): Record<string, string> {
  return home.env({
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: server.baseUrl,
    OPENPROGRAM_MODEL: "m",
    OPENPROGRAM_MAX_RETRIES: "0",
  });
}

const TWO = ["run", `${program("two-questions.mjs")}#twoQuestions`];
const ONE = ["run", `${program("summarize.mjs")}#summarize`, "--input", '{"text":"t"}'];

describe("budgets in the CLI", () => {
  it("--max-turn-tokens stops the turn with exit 3 and says how to raise it; resume with it raised finishes", async () => {
    const stopped = await runCli([...TWO, "--max-turn-tokens", "1000"], { env: env() });
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toContain("error [budget_exceeded]");
    expect(stopped.stderr).toContain(
      "The turn token budget is exceeded: limit 1000 tokens, spent 1200 tokens. Raise it (--max-turn-tokens N",
    );
    expect(stopped.stderr).toContain("--max-turn-tokens");
    expect(server.requests).toHaveLength(2);
    const sessionId = sessionIdFrom(stopped.stderr);

    // The second reply is recorded (it was paid for): the resumed turn takes both from the record.
    const resumed = await runCli(["resume", sessionId, "--max-turn-tokens", "5000"], { env: env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe("answer 1 / answer 2");
    expect(server.requests).toHaveLength(2);
  });

  it("run --isolate: the child's model calls are held to the same flags", async () => {
    const stopped = await runCli([...TWO, "--isolate", "--max-turn-tokens", "1000"], { env: env() });
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toContain("error [budget_exceeded]");
    expect(server.requests).toHaveLength(2);
  });

  it("--max-session-tokens holds across processes: the third run is refused before it sends anything", async () => {
    const first = await runCli([...ONE, "--max-session-tokens", "1000"], { env: env() });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = sessionIdFrom(first.stderr);
    const second = await runCli([...ONE, "--session", sessionId, "--max-session-tokens", "1000"], { env: env() });
    expect(second.code, second.stderr).toBe(3);
    expect(second.stderr).toContain("The session token budget is exceeded");
    const third = await runCli([...ONE, "--session", sessionId, "--max-session-tokens", "1000"], { env: env() });
    expect(third.code, third.stderr).toBe(3);
    expect(third.stderr).toContain("so it was not sent");
    expect(server.requests).toHaveLength(2);
  });

  it('"budgets" in openprogram.config.json: a cost budget on an unpriced model is exit 2, before any request', async () => {
    const project = mkdtempSync(join(tmpdir(), "openprogram-budget-project-"));
    try {
      writeFileSync(join(project, "openprogram.config.json"), JSON.stringify({ budgets: { turn: { cost: 1 } } }));
      const refused = await runCli(ONE, { env: env(), cwd: project });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("error [budget_unpriced_model]");
      expect(refused.stderr).toContain('model "m" has no price');
      expect(server.requests).toHaveLength(0);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it("a budget flag that is not a number is exit 2, and nothing runs", async () => {
    const refused = await runCli([...ONE, "--max-turn-cost", "lots"], { env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("error [invalid_budget]: --max-turn-cost needs a number");
    expect(server.requests).toHaveLength(0);
  });

  it("sessions usage shows what the sessions spent against the configured session budget", async () => {
    const project = mkdtempSync(join(tmpdir(), "openprogram-budget-usage-"));
    try {
      writeFileSync(
        join(project, "openprogram.config.json"),
        JSON.stringify({ budgets: { session: { tokens: 1000 } } }),
      );
      const text = await runCli(["sessions", "usage"], { env: env(), cwd: project });
      expect(text.code, text.stderr).toBe(0);
      // The earlier tests' three sessions spent 1200 tokens each (two 600-token replies).
      expect(text.stdout).toMatch(
        /^budget: session tokens 1000 tokens \(.*openprogram\.config\.json\): 3 at or over it; the most: \S+, 1200 tokens \(120%\)$/m,
      );
      const json = JSON.parse((await runCli(["sessions", "usage", "--json"], { env: env(), cwd: project })).stdout) as {
        budgets: { standings: unknown[] };
      };
      expect(json.budgets.standings).toHaveLength(1);
      expect(json.budgets.standings[0]).toMatchObject({
        scope: "session",
        dimension: "tokens",
        limit: 1000,
        atOrOver: 3,
      });
      expect((json.budgets.standings[0] as { most: { spent: number } }).most.spent).toBe(1200);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});

describe("wall-time budgets in the CLI", () => {
  it("--max-session-seconds holds across processes: crossed by a slow reply, refused next, resumed once raised", async () => {
    await server.close();
    // Slower than the limit, which is itself well above a process's time to its first call.
    server = await startFakeOpenAIServer((_request, index) => ({ delayMs: 2_000, reply: `answer ${index + 1}` }));
    const crossed = await runCli([...ONE, "--max-session-seconds", "1"], { env: env() });
    expect(crossed.code, crossed.stderr).toBe(3);
    expect(crossed.stderr).toContain("error [budget_exceeded]");
    expect(crossed.stderr).toContain("The session time budget is exceeded: limit 1 s, passed");
    expect(crossed.stderr).toContain("--max-session-seconds N");
    const sessionId = sessionIdFrom(crossed.stderr);
    expect(server.requests).toHaveLength(1);

    const refused = await runCli([...ONE, "--session", sessionId, "--max-session-seconds", "1"], { env: env() });
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain("The session time budget is exceeded");
    expect(server.requests).toHaveLength(1);

    const resumed = await runCli(["resume", sessionId, "--max-session-seconds", "60"], { env: env() });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout.trim()).toBe("answer 2");
    expect(server.requests).toHaveLength(2);

    // sessions usage sets the time the sessions ran beside the configured budget: this one ran two 2 s replies.
    const project = mkdtempSync(join(tmpdir(), "openprogram-budget-seconds-"));
    try {
      writeFileSync(join(project, "openprogram.config.json"), JSON.stringify({ budgets: { session: { seconds: 3 } } }));
      const text = await runCli(["sessions", "usage"], { env: env(), cwd: project });
      expect(text.code, text.stderr).toBe(0);
      const line = new RegExp(
        `^budget: session seconds 3 s \\(.*openprogram\\.config\\.json\\): \\d+ at or over it; the most: ${sessionId}, ([\\d.]+) s \\(\\d+%\\)$`,
        "m",
      ).exec(text.stdout);
      expect(line, text.stdout).not.toBeNull();
      expect(Number(line?.[1])).toBeGreaterThanOrEqual(4);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
