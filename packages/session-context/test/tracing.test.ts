import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, askUser, sessionContext } from "../src/index.js";
import { contextCarrierEnv } from "../src/entries/relay.js";
import { createRuntime } from "../src/entries/runtime.js";
import { CAPTURE_CONTENT_VARIABLE, setTraceErrorMessages } from "../src/entries/telemetry.js";
import { resumeTurn } from "../src/entries/turns.js";
import {
  createScriptedAsker,
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "../src/testing/index.js";

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

let store: TempStore;
let server: FakeOpenAIServer;
beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  server = await startFakeOpenAIServer(() => "a plan");
});
afterAll(async () => {
  trace.disable();
  await server.close();
});
beforeEach(() => {
  store = createTempStore();
  exporter.reset();
});
afterEach(() => {
  delete process.env[CAPTURE_CONTENT_VARIABLE];
  store.cleanup();
});

const plan = agenticFunction({ name: "plan", doc: "Plan the work." }, async (input: { goal: string }, call) =>
  call.runtime.exec(`Goal: ${input.goal}`),
);
const research = agenticFunction({ name: "research", doc: "Research a topic." }, async (input: { topic: string }) => {
  const answer = await askUser("Which angle?", { choices: ["depth", "breadth"] });
  return { plan: await plan({ goal: `${input.topic} (${answer})` }), carrier: contextCarrierEnv().TRACEPARENT };
});

function runtime() {
  return createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "fake-model", maxRetries: 0 });
}

function byName(spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = spans.find((span) => span.name === name);
  if (!found) throw new Error(`no span ${name} among ${spans.map((span) => span.name).join(", ")}`);
  return found;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe("GenAI spans through @opentelemetry/api", () => {
  it("one trace per turn: the turn, each agentic call, the question and the model request, nested as the calls are", async () => {
    const asker = createScriptedAsker(["depth"]);
    const { sessionId, result } = await sessionContext(
      { db: store.db, runtime: runtime(), asker },
      async (session) => ({ sessionId: session.sessionId, result: await research({ topic: "agents" }) }),
    );
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      "chat fake-model",
      "execute_tool ask_user",
      "invoke_agent plan",
      "invoke_agent research",
      "invoke_workflow openprogram.turn",
    ]);
    const turn = byName(spans, "invoke_workflow openprogram.turn");
    const outer = byName(spans, "invoke_agent research");
    const inner = byName(spans, "invoke_agent plan");
    const chat = byName(spans, "chat fake-model");
    const ask = byName(spans, "execute_tool ask_user");
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    expect(parentOf(turn)).toBeUndefined();
    expect(parentOf(outer)).toBe(turn.spanContext().spanId);
    expect(parentOf(ask)).toBe(outer.spanContext().spanId);
    expect(parentOf(inner)).toBe(outer.spanContext().spanId);
    expect(parentOf(chat)).toBe(inner.spanContext().spanId);
    for (const span of spans) expect(span.attributes["gen_ai.conversation.id"]).toBe(sessionId);

    const nodes = await store.db.loadNodes(sessionId);
    expect(outer.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "research",
      "openprogram.node.id": nodes.find((node) => node.name === "research")?.id,
    });
    expect(outer.kind).toBe(SpanKind.INTERNAL);
    expect(ask.attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ask_user" });
    const request = server.requests.at(-1);
    expect(chat.kind).toBe(SpanKind.CLIENT);
    expect(chat.attributes).toEqual({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "fake-model",
      "gen_ai.response.model": "fake-model",
      "gen_ai.conversation.id": sessionId,
      // The fake server reports the body's length and the reply's as the token counts.
      "gen_ai.usage.input_tokens": request?.body.length,
      "gen_ai.usage.output_tokens": "a plan".length,
      "gen_ai.response.finish_reasons": ["stop"],
    });
    // A child started inside the call joins the trace under the calling span.
    expect(result.carrier).toBe(`00-${outer.spanContext().traceId}-${outer.spanContext().spanId}-01`);
  });

  it("records message contents only when the conventions' opt-in is set", async () => {
    process.env[CAPTURE_CONTENT_VARIABLE] = "true";
    await sessionContext({ db: store.db, runtime: runtime() }, () => plan({ goal: "ship" }));
    const chat = byName(exporter.getFinishedSpans(), "chat fake-model");
    expect(JSON.parse(chat.attributes["gen_ai.system_instructions"] as string)).toEqual([
      { type: "text", content: "Plan the work." },
    ]);
    expect(JSON.parse(chat.attributes["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "Goal: ship" }] },
    ]);
    expect(JSON.parse(chat.attributes["gen_ai.output.messages"] as string)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "a plan" }], finish_reason: "stop" },
    ]);
  });

  it("a failure sets the error status and records the exception on the failing spans", async () => {
    server.setHandler(() => ({ status: 500, message: "the model is on fire" }));
    setTraceErrorMessages(true); // the opt-in; off, spans carry codes only (the dispatcher's tracing test)
    try {
      await expect(sessionContext({ db: store.db, runtime: runtime() }, () => plan({ goal: "burn" }))).rejects.toThrow(
        /on fire/,
      );
    } finally {
      server.setHandler(() => "a plan");
      setTraceErrorMessages(null);
    }
    const spans = exporter.getFinishedSpans();
    for (const name of ["chat fake-model", "invoke_agent plan", "invoke_workflow openprogram.turn"]) {
      const span = byName(spans, name);
      expect(span.status.code, name).toBe(SpanStatusCode.ERROR);
      expect(span.status.message, name).toMatch(/on fire/);
      expect(span.attributes["error.type"], name).toBe("provider_error");
      expect(span.events.map((event) => event.name)).toContain("exception");
    }
  });

  it("each retry of a model request is a retry event on its chat span", async () => {
    let requests = 0; // the server is shared by the file's tests: count this test's requests
    server.setHandler(() => (requests++ === 0 ? { status: 429, message: "slow down", retryAfter: "0" } : "a plan"));
    try {
      const retrying = createRuntime({
        provider: "openai",
        baseUrl: server.baseUrl,
        model: "fake-model",
        maxRetries: 2,
      });
      await sessionContext({ db: store.db, runtime: retrying }, () => plan({ goal: "retry" }));
    } finally {
      server.setHandler(() => "a plan");
    }
    const chat = byName(exporter.getFinishedSpans(), "chat fake-model");
    expect(chat.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(chat.events.filter((event) => event.name === "retry").map((event) => event.attributes)).toEqual([
      { attempt: 2, delay_ms: 0 },
    ]);
  });

  it("a turn started with a caller's traceparent lands in the caller's trace, under the caller's span", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const spanId = "00f067aa0ba902b7";
    await sessionContext({ db: store.db, runtime: runtime(), traceparent: `00-${traceId}-${spanId}-01` }, () =>
      plan({ goal: "join" }),
    );
    const spans = exporter.getFinishedSpans();
    expect(spans.every((span) => span.spanContext().traceId === traceId)).toBe(true);
    expect(parentOf(byName(spans, "invoke_workflow openprogram.turn"))).toBe(spanId);
  });

  it("a malformed traceparent is ignored (W3C): the turn starts its own trace", async () => {
    await sessionContext({ db: store.db, runtime: runtime(), traceparent: "00-zz-nope-01" }, () => plan({ goal: "x" }));
    const turn = byName(exporter.getFinishedSpans(), "invoke_workflow openprogram.turn");
    expect(parentOf(turn)).toBeUndefined();
    expect(turn.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
  });

  it("a resumed turn is a new trace that links to the trace of the turn it resumes", async () => {
    server.setHandler(() => ({ status: 500, message: "the model is on fire" }));
    try {
      await expect(
        sessionContext({ db: store.db, runtime: runtime(), sessionId: "resumed" }, () => plan({ goal: "again" })),
      ).rejects.toThrow(/on fire/);
    } finally {
      server.setHandler(() => "a plan");
    }
    const first = byName(exporter.getFinishedSpans(), "invoke_workflow openprogram.turn");
    exporter.reset();
    await resumeTurn({ sessionId: "resumed", db: store.db, runtime: runtime(), program: plan });
    const resumed = byName(exporter.getFinishedSpans(), "invoke_workflow openprogram.turn");
    expect(resumed.spanContext().traceId).not.toBe(first.spanContext().traceId);
    expect(resumed.links.map((link) => link.context.traceId)).toEqual([first.spanContext().traceId]);
    expect(resumed.links[0]?.context.spanId).toBe(first.spanContext().spanId);
  });
});
