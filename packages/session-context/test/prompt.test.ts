import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  chat,
  ProviderError,
  RuntimeMissingError,
  sessionContext,
  type Runtime,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { SessionDB } from "../src/entries/store.js";
import {
  createTempStore,
  PYTHON_SESSIONS_FIXTURE,
  scriptedRuntime,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "../src/testing/index.js";

const DOC = `Design three experiments that test the idea.
For each: hypothesis, setup, metric, expected outcome.
  Indented line, "quotes", unicode — ✓, and a trailing space. 
Output a numbered list.`;

const designExperiments = agenticFunction(
  { name: "design_experiments", doc: DOC },
  async ({ idea }: { idea: string }, { runtime }) => runtime.exec(`Idea: ${idea}`),
);

let store: TempStore;
let server: FakeOpenAIServer | undefined;
beforeEach(() => {
  store = createTempStore();
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

describe("the doc reaches the model as the system message, byte for byte", () => {
  it("with the scripted provider", async () => {
    const { runtime, provider } = scriptedRuntime(["1. exp A"]);
    const result = await sessionContext({ db: store.db, runtime }, () =>
      designExperiments({ idea: "agent reliability" }),
    );
    expect(result).toBe("1. exp A");
    expect(provider.requests).toHaveLength(1);
    const messages = provider.requests[0]?.request.messages;
    expect(messages?.[0]).toEqual({ role: "system", content: DOC });
    expect(messages?.at(-1)).toEqual({ role: "user", content: "Idea: agent reliability" });
  });

  it("through the openai provider to a real HTTP server speaking the chat-completions protocol", async () => {
    server = await startFakeOpenAIServer(() => "1. exp A\n2. exp B");
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "fake-model", maxRetries: 0 });
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      expect(await designExperiments({ idea: "agent reliability" })).toBe("1. exp A\n2. exp B");
      return session.sessionId;
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.json.messages?.[0]).toEqual({ role: "system", content: DOC });
    expect(request?.json.model).toBe("fake-model");
    // The recorded hash is of the exact bytes that went over the wire.
    const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm");
    expect(llm?.metadata.prompt_sha256).toBe(
      createHash("sha256")
        .update(request?.body ?? "")
        .digest("hex"),
    );
    expect(llm?.metadata.system).toBe(DOC);
    expect(llm?.metadata.prompt_text).toBe("Idea: agent reliability");
    expect(llm?.name).toBe("fake-model");
    expect(llm?.reads).toEqual([]);
  });

  it("turns an HTTP error into a ProviderError with the status and the provider's message, recorded on the llm node", async () => {
    server = await startFakeOpenAIServer(() => ({ status: 500, message: "the model is on fire" }));
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    let sessionId = "";
    const error = await sessionContext({ db: store.db, runtime }, async (session) => {
      sessionId = session.sessionId;
      return designExperiments({ idea: "x" });
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: "provider_error", status: 500, providerMessage: "the model is on fire" });
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.role, node.metadata.status])).toEqual([
      ["code", "failed"],
      ["llm", "failed"],
    ]);
  });

  it("says how to configure a provider when none is configured", async () => {
    const error = await sessionContext({ db: store.db, runtime: null }, () => designExperiments({ idea: "x" })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RuntimeMissingError);
    expect((error as Error).message).toMatch(/OPENPROGRAM_PROVIDER.*OPENAI_API_KEY/s);
  });
});

describe("history rendering", () => {
  it("shows a later call the earlier turns of the same session, and its own earlier subcalls", async () => {
    const { runtime, provider } = scriptedRuntime(["survey text", "inner text", "paper text"]);
    const survey = agenticFunction(
      { name: "survey", doc: "Survey the field." },
      async ({ topic }: { topic: string }, { runtime: rt }) => rt.exec(`Topic: ${topic}`),
    );
    const helper = agenticFunction({ name: "helper", doc: "Help." }, async (_: { step: number }, { runtime: rt }) =>
      rt.exec("help"),
    );
    const write = agenticFunction(
      { name: "write", doc: "Write the paper." },
      async ({ ask }: { ask: string }, { runtime: rt }) => {
        await helper({ step: 1 });
        return rt.exec(ask);
      },
    );
    const first = await sessionContext({ db: store.db, runtime }, async (session) => {
      await survey({ topic: "agents" });
      return session.sessionId;
    });
    await sessionContext({ db: store.db, runtime, sessionId: first }, () => write({ ask: "now turn it into a paper" }));
    const paperRequest = provider.requests[2]?.request.messages;
    expect(paperRequest).toEqual([
      { role: "system", content: "Write the paper." },
      { role: "user", content: 'Call survey with input {"topic":"agents"}' },
      { role: "assistant", content: "survey returned: survey text" },
      { role: "user", content: 'Call helper with input {"step":1}' },
      { role: "assistant", content: "helper returned: inner text" },
      { role: "user", content: "now turn it into a paper" },
    ]);
    // The helper's own request saw the conversation but not its caller's later work.
    expect(provider.requests[1]?.request.messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
    const llm = (await store.db.loadNodes(first)).filter((node) => node.role === "llm").at(-1);
    expect(llm?.reads).toHaveLength(2);
  });

  it("hides calls declared expose: hidden", async () => {
    const { runtime, provider } = scriptedRuntime(["a", "b"]);
    const secret = agenticFunction(
      { name: "secret", doc: "Hidden.", expose: "hidden" },
      async (_: object, { runtime: rt }) => rt.exec("x"),
    );
    const visible = agenticFunction({ name: "visible", doc: "Visible." }, async (_: object, { runtime: rt }) =>
      rt.exec("y"),
    );
    await sessionContext({ db: store.db, runtime, sessionId: "hid" }, () => secret({}));
    await sessionContext({ db: store.db, runtime, sessionId: "hid" }, () => visible({}));
    expect(provider.requests[1]?.request.messages).toEqual([
      { role: "system", content: "Visible." },
      { role: "user", content: "y" },
    ]);
  });

  it("chat() continues a conversation with its history", async () => {
    const { runtime, provider } = scriptedRuntime(["Hello!", "Cheaper: stay home."]);
    const id = await sessionContext({ db: store.db, runtime }, async (session) => {
      expect(await chat("Plan a weekend")).toBe("Hello!");
      return session.sessionId;
    });
    await sessionContext({ db: store.db, runtime, sessionId: id }, () => chat("Make it cheaper"));
    expect(provider.requests[1]?.request.messages).toEqual([
      { role: "user", content: "Plan a weekend" },
      { role: "assistant", content: "Hello!" },
      { role: "user", content: "Make it cheaper" },
    ]);
    const branch = await store.db.conversationBranch(id);
    expect(branch.map((node) => node.role)).toEqual(["user", "llm", "user", "llm"]);
  });

  it("chat() runs on any Runtime through its chat method, not only one this package built", async () => {
    const { runtime: inner, provider } = scriptedRuntime(["Hi there."]);
    const chatted: string[] = [];
    // A runtime of the caller's own (a wrapper, or one built by another copy of the package) is a plain object.
    const wrapper: Runtime = {
      provider: inner.provider,
      model: inner.model,
      exec: (content, options) => inner.exec(content, options),
      chat: (text, options) => {
        chatted.push(text);
        return inner.chat(text, options);
      },
    };
    const id = await sessionContext({ db: store.db, runtime: wrapper }, async (session) => {
      expect(await chat("Hello")).toBe("Hi there.");
      return session.sessionId;
    });
    expect(chatted).toEqual(["Hello"]);
    expect(provider.requests[0]?.request.messages).toEqual([{ role: "user", content: "Hello" }]);
    expect((await store.db.conversationBranch(id)).map((node) => node.role)).toEqual(["user", "llm"]);
  });

  it("continues the Python fixtures: new nodes follow the old ones and the model sees the earlier turn", async () => {
    const fixture = createTempStore("openprogram-fixture-", { from: PYTHON_SESSIONS_FIXTURE });
    try {
      const db = new SessionDB({ root: fixture.root });
      const { runtime, provider } = scriptedRuntime(["more experiments"]);
      await sessionContext({ db, runtime, sessionId: "research_shared" }, () =>
        designExperiments({ idea: "follow-up" }),
      );
      const nodes = await db.loadNodes("research_shared");
      expect(nodes.slice(5).map((node) => [node.seq, node.role, node.name])).toEqual([
        [5, "code", "design_experiments"],
        [6, "llm", "scripted"],
      ]);
      expect(nodes[5]?.predecessor).toBe("9abc9d1465e5");
      expect(provider.requests[0]?.request.messages.slice(1, 3)).toEqual([
        {
          role: "user",
          content: 'Call research_agent with input {"runtime":"<FakeRuntime>","task":"survey agent reliability"}',
        },
        { role: "assistant", content: "research_agent returned: We propose ..." },
      ]);
      const chatRuntime = scriptedRuntime(["Even cheaper."]);
      await sessionContext({ db, runtime: chatRuntime.runtime, sessionId: "chat_shared" }, () =>
        chat("And cheaper still?"),
      );
      expect(chatRuntime.provider.requests[0]?.request.messages.map((message) => message.content)).toEqual([
        "Plan a short weekend trip",
        "Here is a plan: ...",
        "Make it cheaper",
        "Cheaper plan: ...",
        "And cheaper still?",
      ]);
    } finally {
      fixture.cleanup();
    }
  });
});

describe("provider requests", () => {
  it("leave no abort listener behind on the context's signal, however many requests a long-lived signal sees", async () => {
    server = await startFakeOpenAIServer(() => "ok");
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const original = {
      add: controller.signal.addEventListener.bind(controller.signal),
      remove: controller.signal.removeEventListener.bind(controller.signal),
    };
    controller.signal.addEventListener = (...args: Parameters<AbortSignal["addEventListener"]>) => {
      if (args[0] === "abort") added++;
      original.add(...args);
    };
    controller.signal.removeEventListener = (...args: Parameters<AbortSignal["removeEventListener"]>) => {
      if (args[0] === "abort") removed++;
      original.remove(...args);
    };
    await sessionContext({ db: store.db, runtime, signal: controller.signal }, async () => {
      for (let index = 0; index < 12; index++) await designExperiments({ idea: `i${index}` });
    });
    expect(server.requests).toHaveLength(12);
    expect(added - removed).toBe(0);
  });
});
