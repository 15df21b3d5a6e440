import { afterEach, describe, expect, it } from "vitest";
import { agenticFunction, askUser, chat, sessionContext, tool, type Runtime } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { describeModelCalls } from "../src/entries/store.js";
import {
  createScriptedAsker,
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "../src/testing/index.js";

let server: FakeOpenAIServer | null = null;
let store: TempStore | null = null;
afterEach(async () => {
  await server?.close();
  store?.cleanup();
  server = null;
  store = null;
});

const outline = agenticFunction(
  { name: "outline", doc: "Outline the talk in three points." },
  async ({ topic }: { topic: string }, { runtime }) => runtime.exec(`Topic: ${topic}`),
);
const prepareTalk = agenticFunction(
  { name: "prepare_talk", doc: "Prepare a short talk for the audience the user names." },
  async ({ topic }: { topic: string }, { runtime }) => {
    const audience = await askUser("Who is the audience?");
    const points = await outline({ topic });
    return runtime.exec(`Audience: ${audience}\nPoints: ${points}`);
  },
);

describe("describeModelCalls: what the model saw", () => {
  it("renders each request again from the recorded nodes, byte for byte what was sent (prompt_sha256 checked)", async () => {
    server = await startFakeOpenAIServer((_request, index) => `reply ${index + 1}`);
    store = createTempStore("openprogram-calls-");
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    }) as Runtime;
    const sessionId = await sessionContext(
      { db: store.db, runtime, asker: createScriptedAsker(["students"]) },
      async (session) => {
        await prepareTalk({ topic: "tides" });
        await chat("Make it shorter.");
        return session.sessionId;
      },
    );
    const calls = await describeModelCalls(sessionId, { db: store.db });
    const sent = server.requests.map((request) => (JSON.parse(request.body) as { messages: unknown[] }).messages);
    expect(calls).toHaveLength(3);
    expect(calls.map((call) => call.messages)).toEqual(sent);
    expect(calls.map((call) => call.verified)).toEqual([true, true, true]);
    expect(calls.map((call) => [call.callerName, call.model, call.provider, call.reply])).toEqual([
      ["outline", "m", "openai", "reply 1"],
      ["prepare_talk", "m", "openai", "reply 2"],
      [null, "m", "openai", "reply 3"],
    ]);
    expect(calls[1]?.system).toBe("Prepare a short talk for the audience the user names.");
    expect(calls[1]?.messages.at(-1)).toEqual({ role: "user", content: "Audience: students\nPoints: reply 1" });
  });

  it("says when the bytes cannot be matched: a node changed since it was read", async () => {
    server = await startFakeOpenAIServer(() => "ok");
    store = createTempStore("openprogram-calls-");
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    }) as Runtime;
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await chat("First.");
      await chat("Second.");
      return session.sessionId;
    });
    const [first] = await store.db.loadNodes(sessionId);
    await store.db.updateNode(sessionId, first?.id as string, { output: "First, edited." });
    const calls = await describeModelCalls(sessionId, { db: store.db });
    expect(calls.map((call) => call.verified)).toEqual([false, false]);
  });

  it("does not claim a mismatch for requests that also sent tools: those cannot be re-rendered, and say so", async () => {
    server = await startFakeOpenAIServer((_request, index) =>
      index === 0 ? { toolCalls: [{ id: "call_1", name: "echo", arguments: { text: "hi" } }] } : "done",
    );
    store = createTempStore("openprogram-calls-");
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    }) as Runtime;
    const echo = tool({
      name: "echo",
      description: "Say the text back.",
      input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      execute: ({ text }) => String(text),
    });
    const useTool = agenticFunction({ name: "use_tool", doc: "Use the tool." }, async (_input: object, { runtime }) =>
      runtime.exec("Echo hi.", { tools: [echo] }),
    );
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      await useTool({});
      await outline({ topic: "tides" });
      return session.sessionId;
    });
    const calls = await describeModelCalls(sessionId, { db: store.db });
    expect(calls.map((call) => call.verified)).toEqual([null, null, true]);
    const llm = (await store.db.loadNodes(sessionId)).filter((node) => node.role === "llm");
    expect(llm.map((node) => node.metadata.tools_offered ?? null)).toEqual([["echo"], ["echo"], null]);
  });
});
