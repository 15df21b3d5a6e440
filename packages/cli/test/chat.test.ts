import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import {
  collect,
  createCliHome,
  readRequestLog,
  runCli,
  sessionIdFrom,
  spawnCli,
  waitFor,
  type CliHome,
} from "./helpers/cli.js";
import { runCliInPty } from "./helpers/pty.js";

let home: CliHome;
let server: FakeOpenAIServer;
beforeAll(async () => {
  home = createCliHome();
  server = await startFakeOpenAIServer((request, index) => {
    const last = request.json.messages?.at(-1)?.content ?? "";
    return `reply ${index + 1} to "${last}"`;
  });
});
afterAll(async () => {
  await server.close();
  await home.cleanup();
});

const chatEnv = (): Record<string, string> =>
  home.env({ OPENAI_BASE_URL: server.baseUrl, OPENPROGRAM_MODEL: "fake-model", OPENPROGRAM_MAX_RETRIES: "0" });

describe("openprogram chat", () => {
  it("over piped stdin: each line is a turn of one new session, /exit leaves, and a later chat --session continues it", async () => {
    const before = server.requests.length;
    const first = await runCli(["chat"], {
      env: chatEnv(),
      input: "Plan a trip\n\nMake it cheaper\n/exit\nnever sent\n",
    });
    expect(first.code).toBe(0);
    const sessionId = sessionIdFrom(first.stderr);
    expect(first.stdout).toBe(`reply ${before + 1} to "Plan a trip"\nreply ${before + 2} to "Make it cheaper"\n`);
    const requests = server.requests.slice(before);
    expect(requests.map((request) => request.json.messages)).toEqual([
      [{ role: "user", content: "Plan a trip" }],
      [
        { role: "user", content: "Plan a trip" },
        { role: "assistant", content: `reply ${before + 1} to "Plan a trip"` },
        { role: "user", content: "Make it cheaper" },
      ],
    ]);

    const second = await runCli(["chat", "--session", sessionId], { env: chatEnv(), input: "And a hotel?\n" });
    expect(second.code).toBe(0);
    expect(sessionIdFrom(second.stderr)).toBe(sessionId);
    expect(server.requests.at(-1)?.json.messages?.map((message) => message.content)).toEqual([
      "Plan a trip",
      `reply ${before + 1} to "Plan a trip"`,
      "Make it cheaper",
      `reply ${before + 2} to "Make it cheaper"`,
      "And a hotel?",
    ]);
    const branch = await home.db.conversationBranch(sessionId);
    expect(branch.map((node) => node.role)).toEqual(["user", "llm", "user", "llm", "user", "llm"]);
    expect(await home.db.gitLog(sessionId)).toHaveLength(4);
    const record = await home.db.getSession(sessionId);
    expect(record?.source).toBe("cli");
    // Titled by its first message, not the latest.
    expect(record?.title).toBe("Plan a trip");
  });

  it("--json prints one object per turn with the session and turn ids", async () => {
    const result = await runCli(["chat", "--json", "--system", "Answer briefly."], {
      env: chatEnv(),
      input: "one\ntwo\n",
    });
    expect(result.code).toBe(0);
    const turns = result.stdout
      .trim()
      .split("\n")
      .map(
        (line) =>
          JSON.parse(line) as { ok: boolean; session_id: string; created: boolean; turn_id: string; reply: string },
      );
    expect(turns).toHaveLength(2);
    expect(turns.map((turn) => [turn.ok, turn.created])).toEqual([
      [true, true],
      [true, false],
    ]);
    expect(turns[1]?.session_id).toBe(turns[0]?.session_id);
    expect(turns[1]?.turn_id).not.toBe(turns[0]?.turn_id);
    expect(server.requests.at(-1)?.json.messages?.[0]).toEqual({ role: "system", content: "Answer briefly." });
  });

  it("end of input with no line creates no session", async () => {
    const before = readdirSync(home.root).length;
    const result = await runCli(["chat"], { env: chatEnv(), input: "" });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("session:");
    expect(readdirSync(home.root)).toHaveLength(before);
  });

  it("a failed turn prints its error, the chat goes on, and the exit code is 1", async () => {
    server.setHandler((request, index) =>
      request.json.messages?.at(-1)?.content === "break" ? { status: 503, message: "busy" } : `reply ${index + 1}`,
    );
    try {
      const result = await runCli(["chat"], { env: chatEnv(), input: "break\nfine\n" });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^error \[provider_error\]: openai provider failed with HTTP 503/m);
      expect(result.stdout).toMatch(/^reply \d+\n$/);
    } finally {
      server.setHandler((request, index) => `reply ${index + 1} to "${request.json.messages?.at(-1)?.content ?? ""}"`);
    }
  });

  it("--resume of an unknown session exits 2 listing recent sessions", async () => {
    const result = await runCli(["chat", "--resume", "session_0000000000"], { env: chatEnv(), input: "hello\n" });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[session_not_found\]: Session 'session_0000000000' does not exist\. Most recent sessions:/m,
    );
  });

  it("with no provider configured it exits 2 naming the variables, before creating anything", async () => {
    const before = readdirSync(home.root).length;
    const result = await runCli(["chat"], { env: home.env(), input: "hello\n" });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^error \[runtime_missing\]: No model provider is configured \(this command calls the model\)\. Set OPENPROGRAM_PROVIDER/m,
    );
    expect(readdirSync(home.root)).toHaveLength(before);
  });

  it("on a terminal it prompts, answers each line and leaves on /exit", async () => {
    const result = await runCliInPty(["chat"], {
      env: chatEnv(),
      dir: home.home,
      steps: [
        { expect: "you> ", send: "hello there\r" },
        { expect: "you> ", send: "/exit\r" },
      ],
    });
    expect(result.timed_out).toBe(false);
    expect(result.exit_code).toBe(0);
    expect(result.output).toContain('to "hello there"');
    const sessionId = sessionIdFrom(result.output.replace(/\r/g, ""));
    const branch = await home.db.conversationBranch(sessionId);
    expect(branch.map((node) => node.output)).toEqual(["hello there", branch[1]?.output]);
    expect(branch[1]?.output).toMatch(/to "hello there"$/);
  });

  it("on a terminal, Ctrl-C at the prompt leaves with 130", async () => {
    const result = await runCliInPty(["chat"], {
      env: chatEnv(),
      dir: home.home,
      steps: [{ expect: "you> ", send: "\u0003" }],
    });
    expect(result.timed_out).toBe(false);
    expect(result.exit_code).toBe(130);
  });

  it("Ctrl-C during a turn cancels that turn (recorded) and the chat goes on; Ctrl-C at the prompt leaves with 130", async () => {
    const { env, log } = home.scripted([{ reply: "too late", delayMs: 120_000 }, "second answer"]);
    const child = spawnCli(["chat"], { env: home.env(env) });
    const run = collect(child);
    child.stdin.write("a slow question\n");
    await waitFor(() => readRequestLog(log).length === 1, "the first turn's model request");
    child.kill("SIGINT");
    await waitFor(() => run.output().stderr.includes("(turn cancelled)"), "the turn to be cancelled");
    child.stdin.write("a quick question\n");
    // The reply streams: its line ends only once the turn is over and the chat is back at the prompt.
    await waitFor(() => run.output().stdout.includes("second answer\n"), "the second turn's reply");
    child.kill("SIGINT");
    const result = await run;
    expect(result.code).toBe(130);
    const sessionId = sessionIdFrom(result.stderr);
    const nodes = await home.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.role, node.metadata.status ?? null])).toEqual([
      ["user", null],
      ["llm", "cancelled"],
      ["user", null],
      ["llm", "completed"],
    ]);
    expect(await home.db.gitLog(sessionId)).toHaveLength(3);
  });

  it("SIGTERM cancels the running turn, commits it and exits 143", async () => {
    const { env, log } = home.scripted([{ reply: "too late", delayMs: 120_000 }]);
    const child = spawnCli(["chat"], { env: home.env(env) });
    const run = collect(child);
    child.stdin.write("a slow question\n");
    await waitFor(() => readRequestLog(log).length === 1, "the turn's model request");
    child.kill("SIGTERM");
    const result = await run;
    expect(result.code).toBe(143);
    const sessionId = sessionIdFrom(result.stderr);
    expect((await home.db.loadNodes(sessionId)).map((node) => node.metadata.status ?? null)).toEqual([
      null,
      "cancelled",
    ]);
    expect(await home.db.gitLog(sessionId)).toHaveLength(2);
  });
});
