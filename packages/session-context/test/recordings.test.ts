// Recording provider calls against real loopback servers speaking the OpenAI and Anthropic streaming
// protocols, then replaying them with the server stopped: same results, same llm nodes, no secret in the file.
import { readFileSync, writeFileSync } from "node:fs";
import { Socket } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  agenticFunction,
  chat,
  ProviderError,
  RecordingFormatError,
  ReplayExhaustedError,
  ReplayMismatchError,
  sessionContext,
  tool,
  type SessionNode,
} from "../src/index.js";
import { readRecording, RecordingProvider, removeSecretValues, ReplayProvider } from "../src/entries/recordings.js";
import { createRuntime, ModelRuntime, type ModelProvider } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";

const API_KEY = "sk-live-0123456789abcdefSECRET";
const PASTED_KEY = "sk-pasted-9876543210zyxwvuSECRET";
const URL_SECRET = "urlSECRET42";

const define = tool({
  name: "define",
  description: "Defines a word.",
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: the rise and fall of the sea`,
});
const Verdict = z.strictObject({ verdict: z.enum(["clear", "unclear"]) });
const explain = agenticFunction(
  { name: "explain", doc: "Explain the words of the text, using the tools, then judge it." },
  async ({ text }: { text: string }, { runtime }) => {
    const explained = await runtime.exec(`Text: ${text}`, { tools: [define] });
    const { verdict } = await runtime.exec(`Is this clear? ${explained}`, { schema: Verdict });
    return `${explained} / ${verdict}`;
  },
);

const REPLIES: FakeReply[] = [
  { reply: "Looking it up.", toolCalls: [{ id: "call_1", name: "define", arguments: { word: "tide" }, pieces: 4 }] },
  { chunks: ["Tide: ", "the rise and fall ", "of the sea."] },
  JSON.stringify({ verdict: "clear" }),
];
const PROMPT = `tide (my key is ${PASTED_KEY}, see https://example.com/doc?api_key=${URL_SECRET}&page=2)`;

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-recordings-");
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

interface Outcome {
  result: string | Error;
  deltas: string[];
  llm: Array<Pick<SessionNode, "name" | "output"> & { sha: unknown; provider: unknown }>;
}

async function runWith(provider: ModelProvider, text = PROMPT): Promise<Outcome> {
  const deltas: string[] = [];
  let sessionId = "";
  const result = await sessionContext(
    {
      db: store.db,
      runtime: new ModelRuntime(provider, "m-1"),
      onEvent: (event) => {
        if (event.type === "delta") deltas.push(event.text);
      },
    },
    async (session) => {
      sessionId = session.sessionId;
      return explain({ text });
    },
  ).catch((error: unknown) => error as Error);
  const nodes = sessionId ? await store.db.loadNodes(sessionId) : [];
  const llm = nodes
    .filter((node) => node.role === "llm")
    .map((node) => ({
      name: node.name,
      output: node.output,
      sha: node.metadata.prompt_sha256,
      provider: node.metadata.provider,
    }));
  return { result, deltas, llm };
}

async function liveProvider(kind: "openai" | "anthropic"): Promise<ModelProvider> {
  server = await (kind === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(
    (_request, index) => REPLIES[index] ?? "unexpected",
  );
  return httpProvider(kind, server.baseUrl, API_KEY);
}

/** The provider createRuntime builds from a configuration (the SDK client the CLI would use). */
function httpProvider(kind: "openai" | "anthropic", baseUrl: string, apiKey: string): ModelProvider {
  return (createRuntime({ provider: kind, apiKey, baseUrl, model: "m-1", maxRetries: 0 }) as ModelRuntime).provider;
}

describe.each(["openai", "anthropic"] as const)("recording and replaying over %s's wire protocol", (kind) => {
  it("replays with the server stopped: the same result, deltas and llm nodes; no secret in the file", async () => {
    const file = join(store.home, "rec", `${kind}.jsonl`);
    const live = await runWith(new RecordingProvider(await liveProvider(kind), file));
    expect(live.result).toBe("Tide: the rise and fall of the sea. / clear");
    expect(server?.requests).toHaveLength(3);
    // The key was sent in the request's header; the prompt carried a pasted key and a URL credential.
    expect(JSON.stringify(server?.requests[0]?.headers)).toContain(API_KEY.slice(0, 12));
    await server?.close();
    server = undefined;

    const text = readFileSync(file, "utf8");
    for (const secret of [API_KEY, PASTED_KEY, URL_SECRET, "SECRET"]) expect(text).not.toContain(secret);
    expect(text).toContain("api_key=[secret removed]&page=2");
    const lines = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[0]).toEqual({ type: "header", format_version: 1, provider: kind, max_retries: 0 });
    expect(lines.filter((line) => line.type === "request").map((line) => line.call_index)).toEqual([0, 1, 2]);
    const recording = readRecording(file);
    expect(recording.calls[1]?.request.messages.some((message) => message.role === "tool")).toBe(true);
    expect(recording.calls[2]?.request.responseFormat?.name).toBeDefined();
    expect(recording.calls[1]?.events.filter((event) => event.type === "text").map((event) => event.text)).toEqual([
      "Tide: ",
      "the rise and fall ",
      "of the sea.",
    ]);

    // No socket at all while replaying (the session store is git in child processes, not sockets here).
    const connect = vi.spyOn(Socket.prototype, "connect");
    const replayed = await runWith(new ReplayProvider(file));
    expect(connect).not.toHaveBeenCalled();
    connect.mockRestore();
    expect(replayed.result).toBe(live.result);
    expect(replayed.llm).toEqual(live.llm);
    // The deltas a session emits are batched while the llm node is being written: compare their text.
    expect(replayed.deltas.join("")).toBe(live.deltas.join(""));
    expect(replayed.llm.map((node) => node.provider)).toEqual([kind, kind, kind]);
    expect(replayed.llm[0]?.sha).toMatch(/^[0-9a-f]{64}$/);
  });

  it("fails naming the call and the first differing field when the prompt changed", async () => {
    const file = join(store.home, `${kind}.jsonl`);
    await runWith(new RecordingProvider(await liveProvider(kind), file));
    await server?.close();
    server = undefined;
    const changed = await runWith(new ReplayProvider(file), "ebb");
    expect(changed.result).toBeInstanceOf(ReplayMismatchError);
    const mismatch = changed.result as ReplayMismatchError;
    expect(mismatch.code).toBe("replay_mismatch");
    expect(mismatch.callIndex).toBe(0);
    expect(mismatch.fieldPath).toMatch(/^messages\[\d\]\.content$/);
    expect(mismatch.message).toContain(`replay mismatch at call 0, field ${mismatch.fieldPath}: recorded "`);
    expect(mismatch.incoming).toContain("Text: ebb");
  });
});

describe("replay", () => {
  it("replays content blocks (an image) and names the part that changed", async () => {
    server = await startFakeOpenAIServer(() => "a red dot");
    const file = join(store.home, "image.jsonl");
    const look = agenticFunction(
      { name: "look", doc: "Say what the image shows." },
      async ({ image }: { image: string }, { runtime }) =>
        runtime.exec([
          { type: "text", text: "What is this?" },
          { type: "image", data: image, mediaType: "image/png" },
        ]),
    );
    const run = (provider: ModelProvider, image: string): Promise<unknown> =>
      sessionContext({ db: store.db, runtime: new ModelRuntime(provider, "m-1") }, () => look({ image })).catch(
        (error: unknown) => error,
      );
    const live = await run(
      new RecordingProvider(httpProvider("openai", server.baseUrl, API_KEY), file),
      "iVBORw0KGgo=",
    );
    await server.close();
    server = undefined;
    expect(live).toBe("a red dot");
    expect(await run(new ReplayProvider(file), "iVBORw0KGgo=")).toBe("a red dot");
    const changed = await run(new ReplayProvider(file), "R0lGODlhAQ==");
    expect(changed).toBeInstanceOf(ReplayMismatchError);
    expect((changed as ReplayMismatchError).fieldPath).toMatch(/^messages\[\d\]\.parts\[1\]\.data$/);
  });

  it("retries a recorded failure as the live run did, answered by the next recorded call", async () => {
    server = await startFakeOpenAIServer((_request, index) =>
      index === 0 ? { status: 503, message: "overloaded" } : "after one retry",
    );
    const file = join(store.home, "retry.jsonl");
    const live = createRuntime({
      provider: "openai",
      apiKey: API_KEY,
      baseUrl: server.baseUrl,
      model: "m-1",
      maxRetries: 1,
    });
    const recording = new RecordingProvider((live as ModelRuntime).provider, file);
    const ask = (provider: ModelProvider): Promise<unknown> =>
      sessionContext({ db: store.db, runtime: new ModelRuntime(provider, "m-1") }, () => chat("hello"));
    expect(await ask(recording)).toBe("after one retry");
    await server.close();
    server = undefined;
    expect(readRecording(file).maxRetries).toBe(1);
    expect(readRecording(file).calls.map((call) => call.events.at(-1)?.type)).toEqual(["error", "response"]);
    expect(await ask(new ReplayProvider(file))).toBe("after one retry");
  });
  it.each(["openai", "anthropic"] as const)(
    "answers a %s call made without streaming as it was answered",
    async (kind) => {
      server = await (kind === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(() => "whole reply");
      const file = join(store.home, `whole-${kind}.jsonl`);
      const request = { model: "m-1", messages: [{ role: "user" as const, content: "hi" }], maxTokens: 50 };
      const recording = new RecordingProvider(httpProvider(kind, server.baseUrl, API_KEY), file);
      const live = await recording.complete(request, { signal: new AbortController().signal });
      recording.close();
      await server.close();
      server = undefined;
      const replayed = await new ReplayProvider(file).complete(request, { signal: new AbortController().signal });
      expect(live.text).toBe("whole reply");
      expect(replayed).toEqual(live);
      expect(readRecording(file).calls[0]?.events.map((event) => event.type)).toEqual(["response"]);
    },
  );

  async function recordOne(file: string, replies: FakeReply[]): Promise<void> {
    server = await startFakeOpenAIServer((_request, index) => replies[index] ?? "unexpected");
    const recording = new RecordingProvider(httpProvider("openai", server.baseUrl, "k"), file);
    await sessionContext({ db: store.db, runtime: new ModelRuntime(recording, "m-1") }, async () =>
      chat("hello").catch(() => undefined),
    );
    await server.close();
    server = undefined;
  }

  it("says how many calls were recorded when the program makes one more", async () => {
    const file = join(store.home, "one.jsonl");
    await recordOne(file, ["hi there"]);
    const error = await sessionContext(
      { db: store.db, runtime: new ModelRuntime(new ReplayProvider(file), "m-1") },
      async () => {
        await chat("hello");
        return chat("again");
      },
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ReplayExhaustedError);
    expect((error as ReplayExhaustedError).message).toContain("at call 1");
    expect((error as ReplayExhaustedError).message).toContain("holds 1 call.");
  });

  it("raises a recorded provider failure again", async () => {
    const file = join(store.home, "fail.jsonl");
    await recordOne(file, [{ status: 503, message: "overloaded right now" }]);
    const error = await sessionContext(
      { db: store.db, runtime: new ModelRuntime(new ReplayProvider(file), "m-1") },
      async () => chat("hello"),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(503);
    expect((error as ProviderError).providerMessage).toContain("overloaded right now");
  });

  it("refuses an unknown format_version and a recording cut short", async () => {
    const file = join(store.home, "cut.jsonl");
    await recordOne(file, ["hi there"]);
    const lines = readFileSync(file, "utf8").trim().split("\n");
    writeFileSync(file, [lines[0]?.replace('"format_version":1', '"format_version":2'), ...lines.slice(1)].join("\n"));
    expect(() => new ReplayProvider(file)).toThrow(/format_version 2 is not 1/);
    writeFileSync(file, lines.slice(0, -1).join("\n"));
    expect(() => new ReplayProvider(file)).toThrow(RecordingFormatError);
    expect(() => new ReplayProvider(file)).toThrow(/call 0 has no call_end/);
  });
});

describe("removeSecretValues", () => {
  it("removes secrets by field name, in any nesting and spelling", () => {
    expect(
      removeSecretValues({
        headers: { Authorization: "x", "X-Api-Key": "y", cookie: "z", Accept: "json" },
        options: { apiKey: "a", github_token: "b", password: "c", maxTokens: 5, nested: [{ client_secret: "d" }] },
      }),
    ).toEqual({
      headers: {
        Authorization: "[secret removed]",
        "X-Api-Key": "[secret removed]",
        cookie: "[secret removed]",
        Accept: "json",
      },
      options: {
        apiKey: "[secret removed]",
        github_token: "[secret removed]",
        password: "[secret removed]",
        maxTokens: 5,
        nested: [{ client_secret: "[secret removed]" }],
      },
    });
  });

  it("removes secret-shaped text from free-text fields and leaves ordinary words", () => {
    expect(
      removeSecretValues({
        content:
          "use Bearer abc.def-123456 and sk-proj_ABCDEFGH12 at https://u:pw@host/x?token=t0k&q=1 " +
          "each token counts; the key point",
      }),
    ).toEqual({
      content:
        "use [secret removed] and [secret removed] at https://[secret removed]@host/x?token=[secret removed]&q=1 " +
        "each token counts; the key point",
    });
  });
});
