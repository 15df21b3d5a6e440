import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SessionNode } from "@openprogram/session-context";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { program, readRequestLog, runCli, sessionIdFrom, useCliHome } from "./helpers/cli.js";

const SUMMARIZE_DOC = "Summarize the text in one sentence of plain English. Never add facts.";

const home = useCliHome();

async function nodesOf(sessionId: string): Promise<SessionNode[]> {
  return home.db.loadNodes(sessionId);
}

describe("openprogram run, against the scripted provider", () => {
  it("sends the function's doc as the system message and records the call in a new cli session", async () => {
    const { env, log } = home.scripted(["A greeting, summarized."]);
    const result = await runCli(
      ["run", `${program("summarize.mjs")}#summarize`, "--input", '{"text": "hello world"}'],
      { env: home.env(env) },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("A greeting, summarized.\n");
    const sessionId = sessionIdFrom(result.stderr);
    expect(sessionId).toMatch(/^session_[0-9a-f]{10}$/);

    const requests = readRequestLog(log);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.messages).toEqual([
      { role: "system", content: SUMMARIZE_DOC },
      { role: "user", content: "Text: hello world" },
    ]);

    const record = (await home.db.listSessions()).find((entry) => entry.id === sessionId);
    expect(record?.source).toBe("cli");
    expect(record?.status).toBe("idle");
    expect(record?.title).toBe('summarize(text="hello world")');
    const nodes = await nodesOf(sessionId);
    expect(nodes.map((node) => [node.role, node.name, node.metadata.status])).toEqual([
      ["code", "summarize", "completed"],
      ["llm", "scripted", "completed"],
    ]);
    expect(nodes[0]?.metadata.doc).toBe(SUMMARIZE_DOC);
    expect(nodes[0]?.input).toEqual({ text: "hello world" });
    expect(nodes[1]?.caller).toBe(nodes[0]?.id);
    const log2 = await home.db.gitLog(sessionId);
    expect(log2[0]?.message).toMatch(/^turn turn_[0-9a-f]{10} \(cli\)$/);
  });

  it("loads a TypeScript module's default export through tsx and nests its calls", async () => {
    const { env, log } = home.scripted(["What is it?\nWhy?\nHow?", "# Notes"]);
    const result = await runCli(["run", program("research-notes.ts"), "--input", '{"topic": "tides"}', "--json"], {
      env: home.env(env),
    });
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as {
      ok: boolean;
      session_id: string;
      created: boolean;
      turn_id: string;
      result: unknown;
    };
    expect(output).toEqual({
      ok: true,
      session_id: sessionIdFrom(result.stderr),
      created: true,
      turn_id: output.turn_id,
      result: { topic: "tides", questions: ["What is it?", "Why?", "How?"], notes: "# Notes" },
    });
    expect(output.turn_id).toMatch(/^turn_[0-9a-f]{10}$/);
    const requests = readRequestLog(log);
    expect(requests.map((request) => request.messages[0]?.content)).toEqual([
      "List three questions worth asking about the topic, one per line.",
      "Write study notes that answer the questions, under a heading per question.",
    ]);
    const nodes = await nodesOf(output.session_id);
    const byId = new Map(nodes.map((node) => [node.id, node]));
    expect(nodes.map((node) => `${node.name}<${byId.get(node.caller)?.name ?? ""}`)).toEqual([
      "write_notes<",
      "outline<write_notes",
      "scripted<outline",
      "scripted<write_notes",
    ]);
  });

  it("reads the input from --input-file and prints non-string results as JSON", async () => {
    const inputFile = home.file("input.json", JSON.stringify({ text: "one two  three" }));
    const result = await runCli(["run", program("pure-code.mjs"), "--input-file", inputFile], { env: home.env() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ words: 3, source: "cli" });
    expect(result.stdout).toBe(`${JSON.stringify({ words: 3, source: "cli" }, null, 2)}\n`);
  });

  it("--input-file - reads the input object from stdin", async () => {
    const result = await runCli(["run", program("pure-code.mjs"), "--input-file", "-"], {
      env: home.env(),
      input: '{"text": "from standard input"}',
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ words: 3, source: "cli" });
  });

  it("--session <new id> creates the session under that id; the same id continues it", async () => {
    const first = await runCli(
      ["run", program("pure-code.mjs"), "--session", "notes-2026", "--input", '{"text": "a b"}', "--json"],
      { env: home.env() },
    );
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      ok: true,
      session_id: "notes-2026",
      created: true,
      result: { words: 2 },
    });
    expect(first.stderr).toContain("session: notes-2026 (--session notes-2026 to continue)");
    const second = await runCli(
      ["run", program("pure-code.mjs"), "--resume", "notes-2026", "--input", '{"text": "a b c"}', "--json"],
      { env: home.env() },
    );
    expect(second.code).toBe(0);
    const output = JSON.parse(second.stdout) as { session_id: string; created: boolean; turn_id: string };
    expect(output).toMatchObject({ session_id: "notes-2026", created: false });
    expect(output.turn_id).not.toBe((JSON.parse(first.stdout) as { turn_id: string }).turn_id);
    expect((await nodesOf("notes-2026")).map((node) => node.output)).toEqual([
      { words: 2, source: "cli" },
      { words: 3, source: "cli" },
    ]);
    expect(await home.db.gitLog("notes-2026")).toHaveLength(3);
  });
});

describe("openprogram run, against a loopback server speaking the OpenAI protocol", () => {
  let server: FakeOpenAIServer;
  beforeAll(async () => {
    server = await startFakeOpenAIServer();
  });
  afterAll(() => server.close());
  afterEach(() => server.setHandler((_request, index) => `reply #${index + 1}`));

  const openaiEnv = (): Record<string, string> =>
    home.env({ OPENAI_BASE_URL: server.baseUrl, OPENPROGRAM_MODEL: "fake-model", OPENPROGRAM_MAX_RETRIES: "0" });

  it("the request's system message is the doc, and a second run --session <id> sees the first run's history", async () => {
    server.setHandler((_request, index) => (index === 0 ? "Summary one." : "Summary two."));
    const before = server.requests.length;
    const first = await runCli(["run", program("summarize.mjs"), "--input", '{"text": "first text"}'], {
      env: openaiEnv(),
    });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("Summary one.\n");
    const sessionId = sessionIdFrom(first.stderr);

    const second = await runCli(
      ["run", program("summarize.mjs"), "--session", sessionId, "--input", '{"text": "second text"}'],
      { env: openaiEnv() },
    );
    expect(second.code).toBe(0);
    expect(second.stdout).toBe("Summary two.\n");
    expect(sessionIdFrom(second.stderr)).toBe(sessionId);

    const [firstRequest, secondRequest] = server.requests.slice(before);
    expect(firstRequest?.path).toBe("/v1/chat/completions");
    expect(firstRequest?.json.model).toBe("fake-model");
    expect(firstRequest?.json.messages).toEqual([
      { role: "system", content: SUMMARIZE_DOC },
      { role: "user", content: "Text: first text" },
    ]);
    const messages = secondRequest?.json.messages ?? [];
    expect(messages[0]).toEqual({ role: "system", content: SUMMARIZE_DOC });
    expect(messages.at(-1)).toEqual({ role: "user", content: "Text: second text" });
    // The first run (its call and result) is history the second run's request carries.
    const history = JSON.stringify(messages.slice(1, -1));
    expect(history).toContain("first text");
    expect(history).toContain("Summary one.");

    // What the llm node recorded is exactly what went over the wire.
    const llm = (await nodesOf(sessionId)).filter((node) => node.role === "llm");
    expect(llm.map((node) => node.metadata.prompt_sha256)).toEqual(
      [firstRequest, secondRequest].map((request) =>
        createHash("sha256")
          .update(request?.body ?? "")
          .digest("hex"),
      ),
    );
  });

  it("prints a structured result as JSON: indented without --json, the value itself in --json's result", async () => {
    const value = { port: "Lisbon", heights: [3.4, 0.6], note: null };
    // The first reply fails the schema: it is sent back with the problem, and the second is the value.
    server.setHandler((_request, index) => (index === 0 ? '{"port": "Lisbon"}' : JSON.stringify(value)));
    const before = server.requests.length;
    const plain = await runCli(
      ["run", `${program("describe-tides.mjs")}#describeTides`, "--input", '{"port": "Lisbon"}'],
      {
        env: openaiEnv(),
      },
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe(`${JSON.stringify(value, null, 2)}\n`);
    const [first] = server.requests.slice(before);
    expect(first?.json.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } });

    server.setHandler(() => JSON.stringify(value));
    const json = await runCli(
      ["run", `${program("describe-tides.mjs")}#describeTides`, "--input", '{"port": "Lisbon"}', "--json"],
      { env: openaiEnv() },
    );
    expect(json.code).toBe(0);
    expect((JSON.parse(json.stdout) as { result: unknown }).result).toEqual(value);
    const llm = (await nodesOf(sessionIdFrom(json.stderr))).filter((node) => node.role === "llm");
    expect(llm.map((node) => node.metadata.parsed_output)).toEqual([value]);
  });

  it("a provider error fails the run with exit 1, recorded on the nodes", async () => {
    server.setHandler(() => ({ status: 500, message: "the model is overloaded" }));
    const result = await runCli(["run", program("summarize.mjs"), "--input", '{"text": "x"}', "--json"], {
      env: openaiEnv(),
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^error \[provider_error\]: openai provider failed with HTTP 500: .*overloaded/m);
    expect(result.stderr).not.toMatch(/^\s+at /m);
    const output = JSON.parse(result.stdout) as { ok: boolean; session_id: string; error: { code: string } };
    expect(output).toMatchObject({
      ok: false,
      created: true,
      error: { code: "provider_error", name: "ProviderError" },
    });
    const nodes = await nodesOf(output.session_id);
    expect(nodes.map((node) => [node.role, node.metadata.status])).toEqual([
      ["code", "failed"],
      ["llm", "failed"],
    ]);
    const record = (await home.db.listSessions()).find((entry) => entry.id === output.session_id);
    expect(record?.status).toBe("failed");
  });
});

describe("the run's history is what the web would see", () => {
  it("records the input exactly as given and the result as returned", async () => {
    const input = { text: 'ünïcödé  and "quotes"', extra: [1, 2, { deep: true }] };
    const result = await runCli(["run", program("pure-code.mjs"), "--input", JSON.stringify(input), "--json"], {
      env: home.env(),
    });
    expect(result.code).toBe(0);
    const { session_id: sessionId } = JSON.parse(result.stdout) as { session_id: string };
    const [node] = await nodesOf(sessionId);
    expect(node?.input).toEqual(input);
    expect(readFileSync(`${home.root}/${sessionId}/meta.json`, "utf8")).toContain('"source": "cli"');
  });
});
