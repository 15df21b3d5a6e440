// Tool calls over each provider's real wire protocol: loopback HTTP servers that stream the calls in pieces
// (arguments cut anywhere, inside strings too), and read the results the next request sends back.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agenticFunction, sessionContext, tool, type SessionNode } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";

const lookups: string[] = [];
const define = tool({
  name: "define",
  description: "Defines a word.",
  input: z.object({ word: z.string(), language: z.enum(["en", "fr"]).default("en") }),
  execute: ({ word, language }) => {
    lookups.push(`${word}/${language}`);
    return `${word}: the rise and fall of the sea`;
  },
});
const glossary = agenticFunction(
  { name: "glossary", doc: "Explain the words of the text, using the tools." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`, { tools: [define] }),
);

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-tools-wire-");
  lookups.length = 0;
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

const script = (id: string): FakeReply[] => [
  {
    reply: "Looking it up.",
    // The arguments' text, cut into five pieces: the cuts fall inside the strings.
    toolCalls: [{ id, name: "define", arguments: { word: "tide «marée»" }, pieces: 5 }],
  },
  "Tide: the rise and fall of the sea.",
];

async function run(provider: "openai" | "anthropic"): Promise<{ nodes: SessionNode[]; sessionId: string }> {
  const replies = script(provider === "openai" ? "call_abc" : "toolu_abc");
  server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(
    (_request, index) => replies[index] ?? "unexpected",
  );
  const runtime = createRuntime({
    provider,
    apiKey: "test-key",
    baseUrl: server.baseUrl,
    model: "fake-model",
    maxRetries: 0,
  });
  const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
    expect(await glossary({ text: "the tide" })).toBe("Tide: the rise and fall of the sea.");
    return session.sessionId;
  });
  return { nodes: await store.db.loadNodes(sessionId), sessionId };
}

describe("tool calls over the wire", () => {
  it("openai: streamed tool_calls deltas are put together, the result goes back as a tool message", async () => {
    const { nodes } = await run("openai");
    expect(lookups).toEqual(["tide «marée»/en"]);
    const [first, second] = server?.requests ?? [];
    expect(first?.json.tools).toEqual([
      {
        type: "function",
        function: {
          name: "define",
          description: "Defines a word.",
          parameters: {
            type: "object",
            properties: { word: { type: "string" }, language: { type: "string", enum: ["en", "fr"], default: "en" } },
            required: ["word"],
          },
        },
      },
    ]);
    expect((second?.json.messages ?? []).slice(2)).toEqual([
      {
        role: "assistant",
        content: "Looking it up.",
        tool_calls: [
          // Sent back as Python OpenProgram sends recorded arguments: its json.dumps (", ", ": ", ASCII only).
          {
            id: "call_abc",
            type: "function",
            function: { name: "define", arguments: '{"word": "tide \\u00abmar\\u00e9e\\u00bb"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_abc", content: "tide «marée»: the rise and fall of the sea" },
    ]);
    const asked = nodes.find((node) => Array.isArray(node.metadata.tool_calls)) as SessionNode;
    expect(asked.metadata.tool_calls).toEqual([
      { id: "call_abc", name: "define", arguments: '{"word":"tide «marée»"}' },
    ]);
    // Each llm node's hash is of the exact bytes that went over the wire, tool requests included.
    const replies = nodes.filter((node) => node.role === "llm");
    expect(replies.map((node) => node.metadata.prompt_sha256)).toEqual(
      server?.requests.map((request) => createHash("sha256").update(request.body).digest("hex")),
    );
  });

  it("anthropic: streamed input_json_delta pieces are put together, the result goes back as a tool_result block", async () => {
    const { nodes } = await run("anthropic");
    expect(lookups).toEqual(["tide «marée»/en"]);
    const [first, second] = server?.requests ?? [];
    expect(first?.json.tools).toEqual([
      {
        name: "define",
        description: "Defines a word.",
        input_schema: {
          type: "object",
          properties: { word: { type: "string" }, language: { type: "string", enum: ["en", "fr"], default: "en" } },
          required: ["word"],
        },
      },
    ]);
    expect(second?.json.messages).toEqual([
      { role: "user", content: "Text: the tide" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking it up." },
          { type: "tool_use", id: "toolu_abc", name: "define", input: { word: "tide «marée»" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_abc", content: "tide «marée»: the rise and fall of the sea" },
        ],
      },
    ]);
    const code = nodes.find((node) => node.name === "define");
    expect(code).toMatchObject({
      input: { word: "tide «marée»" },
      metadata: { tool_call_id: "toolu_abc", status: "completed" },
    });
  });

  it("anthropic: an error result is marked is_error, and parallelToolCalls false disables parallel tool use", async () => {
    const broken = tool({
      name: "broken",
      description: "Always fails.",
      input: z.object({}),
      execute: () => {
        throw new Error("out of order");
      },
    });
    const replies: FakeReply[] = [{ toolCalls: [{ name: "broken", arguments: {} }] }, "It failed."];
    server = await startFakeAnthropicServer((_request, index) => replies[index] ?? "unexpected");
    const runtime = createRuntime({
      provider: "anthropic",
      apiKey: "k",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    });
    const tryIt = agenticFunction({ name: "try_it", doc: "Try." }, async (_: object, { runtime: model }) =>
      model.exec("Try it.", { tools: [broken], parallelToolCalls: false }),
    );
    await sessionContext({ db: store.db, runtime }, () => tryIt({}));
    expect(server.requests[0]?.json.tool_choice).toEqual({ type: "auto", disable_parallel_tool_use: true });
    const last = (server.requests[1]?.json.messages ?? []).at(-1) as unknown;
    expect(last).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "[error] out of order", is_error: true }],
    });
  });
});
