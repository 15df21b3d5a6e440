// Streaming through the core: both HTTP providers against real loopback servers speaking their
// streaming wire protocols (OpenAI SSE chunks, Anthropic's event stream), and the scripted provider.
import { storeInternals } from "../src/store/internal.js";
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  CancelledError,
  chat,
  ProviderError,
  sessionContext,
  type SessionEvent,
  type SessionNode,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  scriptedRuntime,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  waitFor,
  type FakeProviderServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");

const PROVIDERS = [
  { name: "openai", start: startFakeOpenAIServer },
  { name: "anthropic", start: startFakeAnthropicServer },
] as const;

const summarise = agenticFunction(
  { name: "summarise", doc: "Summarise the text in one line." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

/** Runs `body` in a session against `server`, collecting every event; resolves with the outcome. */
async function runStreamed(
  provider: "openai" | "anthropic",
  server: FakeProviderServer,
  body: () => Promise<string>,
  options: { signal?: AbortSignal; onDelta?: (sessionId: string) => void } = {},
): Promise<{ sessionId: string; events: SessionEvent[]; result: string | Error }> {
  const runtime = createRuntime({ provider, apiKey: "test-key", baseUrl: server.baseUrl, model: "m-1", maxRetries: 0 });
  const events: SessionEvent[] = [];
  let sessionId = "";
  const result = await sessionContext(
    {
      db: store.db,
      runtime,
      ...(options.signal ? { signal: options.signal } : {}),
      onEvent: (event) => {
        events.push(event);
        if (event.type === "delta") options.onDelta?.(event.sessionId);
      },
    },
    async (session) => {
      sessionId = session.sessionId;
      return body();
    },
  ).catch((error: unknown) => error as Error);
  return { sessionId, events, result };
}

function llmEvents(events: SessionEvent[]): Array<SessionEvent & { type: "node" | "delta" }> {
  return events.filter(
    (event): event is SessionEvent & { type: "node" | "delta" } =>
      event.type === "delta" || (event.type === "node" && event.node.role === "llm"),
  );
}

async function llmNode(sessionId: string): Promise<SessionNode> {
  const node = (await store.db.loadNodes(sessionId)).find((entry) => entry.role === "llm");
  if (!node) throw new Error("no llm node was recorded");
  return node;
}

describe.each(PROVIDERS)("the $name provider streams", ({ name, start }) => {
  let server: FakeProviderServer;
  beforeEach(async () => {
    server = await start();
  });
  afterEach(() => server.close());

  it("emits the reply's deltas in order between the running node and its one final update", async () => {
    const chunks = ["One ", "line ", "that ", "sums ", "it ", "up."];
    server.setHandler(() => ({ chunks, chunkDelayMs: 15, usage: { input: 42, output: 6 } }));
    const { sessionId, events, result } = await runStreamed(name, server, () => summarise({ text: "a long text" }));
    expect(result).toBe(chunks.join(""));
    const stream = llmEvents(events);
    // append (running), then the deltas, then exactly one update: the store is not written per token.
    expect(stream[0]).toMatchObject({ type: "node", op: "append", node: { metadata: { status: "running" } } });
    expect(stream.at(-1)).toMatchObject({ type: "node", op: "update", node: { metadata: { status: "completed" } } });
    const deltas = stream.slice(1, -1);
    expect(deltas.every((event) => event.type === "delta")).toBe(true);
    expect(deltas.length).toBeGreaterThan(1);
    const nodeId = (stream[0] as { node: SessionNode }).node.id;
    expect(deltas.every((event) => event.type === "delta" && event.nodeId === nodeId)).toBe(true);
    expect(deltas.map((event) => (event.type === "delta" ? event.text : "")).join("")).toBe(chunks.join(""));

    const node = await llmNode(sessionId);
    expect(node.id).toBe(nodeId);
    expect(node.output).toBe(chunks.join(""));
    expect(node.metadata).toMatchObject({
      status: "completed",
      provider: name,
      usage: { inputTokens: 42, outputTokens: 6 },
      prompt_sha256: sha256(server.requests[0]?.body ?? ""),
    });
    // The running node already carried the digest of the bytes it was about to send (replay matches by it).
    expect((stream[0] as { node: SessionNode }).node.metadata.prompt_sha256).toBe(node.metadata.prompt_sha256);
    expect(server.requests[0]?.json.stream).toBe(true);
  });

  it("sends exactly the bytes requestBody() promises, stream flag included", async () => {
    const runtime = createRuntime({
      provider: name,
      apiKey: "k",
      baseUrl: server.baseUrl,
      model: "m-1",
      maxRetries: 0,
    });
    await sessionContext({ db: store.db, runtime }, () => summarise({ text: "bytes" }));
    const request = {
      model: "m-1",
      messages: [
        { role: "system" as const, content: "Summarise the text in one line." },
        { role: "user" as const, content: "Text: bytes" },
      ],
    };
    expect(server.requests[0]?.body).toBe(runtime?.provider.requestBody?.(request));
    if (name === "openai") expect(server.requests[0]?.json.stream_options).toEqual({ include_usage: true });
  });

  const breaks: Array<{ breakAfter: "reset" | "not_json" | "cut"; says: RegExp }> = [
    { breakAfter: "reset", says: /connection broke mid-stream after 12 characters/ },
    { breakAfter: "not_json", says: /chunk that is not JSON after 12 characters/ },
    { breakAfter: "cut", says: /stream ended before the reply finished .* after 12 characters/ },
  ];
  it.each(breaks)(
    "fails the node on a broken stream ($breakAfter), keeping the partial text",
    async ({ breakAfter, says }) => {
      server.setHandler((): FakeReply => ({ chunks: ["Partial ", "text"], chunkDelayMs: 5, breakAfter }));
      const { sessionId, events, result } = await runStreamed(name, server, () => summarise({ text: "t" }));
      expect(result).toBeInstanceOf(ProviderError);
      expect((result as Error).message).toMatch(says);
      const node = await llmNode(sessionId);
      expect(node.output).toBeNull();
      expect(node.metadata).toMatchObject({
        status: "failed",
        partial_output: "Partial text",
        error: { code: "provider_error" },
      });
      const deltas = events.filter((event) => event.type === "delta");
      expect(deltas.map((event) => (event.type === "delta" ? event.text : "")).join("")).toBe("Partial text");
      // No silent retry: the one request is all the server saw.
      expect(server.requests).toHaveLength(1);
    },
  );

  it("cancels mid-stream: aborts the HTTP request and records the text so far", async () => {
    const chunks = Array.from({ length: 200 }, (_, index) => `w${index} `);
    server.setHandler(() => ({ chunks, chunkDelayMs: 50 }));
    const stop = new AbortController();
    let deltas = 0;
    const { sessionId, result } = await runStreamed(name, server, () => summarise({ text: "t" }), {
      signal: stop.signal,
      onDelta: () => {
        if (++deltas === 3) stop.abort(new Error("user pressed stop"));
      },
    });
    expect(result).toBeInstanceOf(CancelledError);
    const node = await llmNode(sessionId);
    expect(node.metadata.status).toBe("cancelled");
    const partial = node.metadata.partial_output as string;
    expect(partial.startsWith("w0 w1 w2 ")).toBe(true);
    expect(partial.length).toBeLessThan(chunks.join("").length);
    // The server sees its connection closed long before its 10 s of chunks would have ended.
    await waitFor(() => server.requests[0]?.timing.closedAt !== null, "the provider connection to close", 5_000);
  });
});

describe("streamed chat on the conversation branch", () => {
  it("links a streaming reply to the head and moves the head to it only when it completes", async () => {
    const server = await startFakeOpenAIServer(() => ({ chunks: ["Hi ", "there."], chunkDelayMs: 20 }));
    try {
      let headWhileStreaming: string | null | undefined;
      let userId = "";
      const { sessionId, result } = await runStreamed("openai", server, () => chat("Hello"), {
        onDelta: (id) => {
          if (headWhileStreaming !== undefined) return;
          userId =
            storeInternals(store.db)
              .snapshotSync(id)
              .ordered.find((node) => node.role === "user")?.id ?? "";
          headWhileStreaming = storeInternals(store.db).readMetaSync(id).head_id;
        },
      });
      expect(result).toBe("Hi there.");
      expect(headWhileStreaming).toBe(userId);
      const reply = await llmNode(sessionId);
      expect(reply.predecessor).toBe(userId);
      expect(storeInternals(store.db).readMetaSync(sessionId).head_id).toBe(reply.id);
    } finally {
      await server.close();
    }
  });

  it("renders a continued turn from the branch with the new message last, and records the user's node it read", async () => {
    const server = await startFakeOpenAIServer((_request, index) => `Reply ${index + 1}.`);
    try {
      const runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m-1" });
      const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
        await chat("First");
        return session.sessionId;
      });
      await sessionContext({ db: store.db, runtime, sessionId }, () => chat("Second"));
      const sent = JSON.parse(server.requests[1]?.body ?? "{}") as { messages: unknown[] };
      expect(sent.messages).toEqual([
        { role: "user", content: "First" },
        { role: "assistant", content: "Reply 1." },
        { role: "user", content: "Second" },
      ]);
      const nodes = await store.db.loadNodes(sessionId);
      const second = nodes.filter((node) => node.role === "user")[1];
      const reply = nodes.at(-1);
      expect(reply).toMatchObject({ role: "llm", output: "Reply 2.", predecessor: second?.id });
      expect(reply?.reads).toEqual(nodes.slice(0, 3).map((node) => node.id));
    } finally {
      await server.close();
    }
  });

  it("fails the turn with the user's node's write error, stops its request, and records no reply", async () => {
    // A reply that never comes in the test's time: the turn ends only because its request is stopped.
    const server = await startFakeOpenAIServer(() => ({ delayMs: 600_000, reply: "Too late." }));
    const db = store.db as unknown as { appendNode: (...args: unknown[]) => Promise<SessionNode> };
    const append = db.appendNode.bind(db);
    db.appendNode = async (...args: unknown[]) => {
      if ((args[1] as { role?: string }).role === "user") throw new Error("the disk refused the user's node");
      return append(...args);
    };
    try {
      const { sessionId, result } = await runStreamed("openai", server, () => chat("Hello"));
      expect(result).toBeInstanceOf(Error);
      expect((result as Error).message).toMatch(/the disk refused the user's node/);
      expect(await store.db.loadNodes(sessionId)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("leaves the head on the user's message when the reply fails", async () => {
    const server = await startFakeOpenAIServer(() => ({ chunks: ["Hal"], breakAfter: "reset" }));
    try {
      const { sessionId, result } = await runStreamed("openai", server, () => chat("Hello"));
      expect(result).toBeInstanceOf(ProviderError);
      const user = (await store.db.loadNodes(sessionId)).find((node) => node.role === "user");
      expect(storeInternals(store.db).readMetaSync(sessionId).head_id).toBe(user?.id);
      expect((await llmNode(sessionId)).metadata).toMatchObject({ status: "failed", partial_output: "Hal" });
    } finally {
      await server.close();
    }
  });
});

describe("the scripted provider streams", () => {
  it("streams a plain reply and a chunked one with its chunk delay; the deltas add up to each output", async () => {
    const { runtime } = scriptedRuntime(["two words", { chunks: ["a", "b", "c", "d"], chunkDelayMs: 40 }]);
    const events: SessionEvent[] = [];
    const id = await sessionContext(
      { db: store.db, runtime, onEvent: (event) => events.push(event) },
      async (session) => {
        expect(await summarise({ text: "x" })).toBe("two words");
        expect(await summarise({ text: "y" })).toBe("abcd");
        return session.sessionId;
      },
    );
    const llm = (await store.db.loadNodes(id)).filter((node) => node.role === "llm");
    const deltasOf = (nodeId: string) =>
      events.flatMap((event) => (event.type === "delta" && event.nodeId === nodeId ? [event.text] : []));
    expect(deltasOf(llm[0]?.id ?? "").join("")).toBe("two words");
    // Pieces that come before the running node is written are passed on together; later ones one by one.
    const chunked = deltasOf(llm[1]?.id ?? "");
    expect(chunked.join("")).toBe("abcd");
    expect(chunked.length).toBeGreaterThan(1);
  });

  it("fails after its chunks, like a stream that breaks mid-way", async () => {
    const { runtime } = scriptedRuntime([{ chunks: ["half"], error: { status: 502, message: "upstream reset" } }]);
    const id = await sessionContext({ db: store.db, runtime }, async (session) => {
      await expect(summarise({ text: "x" })).rejects.toThrow(/upstream reset/);
      return session.sessionId;
    });
    expect((await llmNode(id)).metadata).toMatchObject({ status: "failed", partial_output: "half" });
  });
});
