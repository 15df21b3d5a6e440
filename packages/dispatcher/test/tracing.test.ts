import { agenticFunction, sessionContext, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startTraceExport, type TraceExport } from "@openprogram/session-context/telemetry";
import {
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "@openprogram/session-context/testing";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "@openprogram/otlp-receiver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeAll, startDispatcher } from "./helpers.js";

const summarize = agenticFunction(
  { name: "summarize", doc: "Summarize the text in one sentence." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);

let fake: FakeOpenAIServer;
let receiver: OtlpReceiver;
let exported: TraceExport;
let runtime: Runtime;
let local: TempStore;

beforeAll(async () => {
  fake = await startFakeOpenAIServer(() => "short");
  receiver = await startOtlpReceiver();
  runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 }) as Runtime;
  local = createTempStore("openprogram-dispatcher-trace-");
  // The OTLP exporter reads its endpoint from the environment when it is made.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.endpoint;
  try {
    exported = (await startTraceExport({ warn: (message) => expect.fail(message) })) as TraceExport;
  } finally {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  }
});

afterAll(async () => {
  await closeAll();
  await exported.shutdown();
  await receiver.close();
  await fake.close();
  local.cleanup();
});

/** What must match between entries: names, kinds, attributes apart from ids, and the parent structure. */
function shape(spans: readonly ReceivedSpan[]): unknown[] {
  const nameOf = new Map(spans.map((span) => [span.spanId, span.name]));
  return spans
    .map((span) => ({
      name: span.name,
      parent: nameOf.get(span.parentSpanId) ?? "(caller)",
      kind: span.kind,
      attributes: Object.fromEntries(
        Object.entries(span.attributes).filter(
          ([key]) => !["gen_ai.conversation.id", "openprogram.node.id", "openprogram.turn.id"].includes(key),
        ),
      ),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

describe("the dispatcher's turns are traced", () => {
  it("a turn joins the trace of the upgrade request's traceparent header, shaped as the same call run from code", async () => {
    const traceId = "5b8aa5a2d2c872e8321cf37308d69df2";
    const callerSpan = "051581bf3cb55c13";
    const served = await startDispatcher({ runtime, programs: { summarize } });
    const client = await served.connect({ headers: { traceparent: `00-${traceId}-${callerSpan}-01` } });
    client.send({ type: "run", program: "summarize", input: { text: "a b" } });
    const session = await client.next("session");
    await client.next("turn_done");
    await exported.flush();
    const web = receiver.spans.splice(0);
    expect(web.map((span) => span.name).sort()).toEqual([
      "chat fake-model",
      "invoke_agent summarize",
      "invoke_workflow openprogram.turn",
    ]);
    expect(web.every((span) => span.traceId === traceId)).toBe(true);
    expect(web.find((span) => span.name.startsWith("invoke_workflow"))?.parentSpanId).toBe(callerSpan);
    expect(web.every((span) => span.attributes["gen_ai.conversation.id"] === session.session_id)).toBe(true);

    await sessionContext({ db: local.db, runtime, traceparent: `00-${traceId}-${callerSpan}-01` }, () =>
      summarize({ text: "a b" }),
    );
    await exported.flush();
    const code = receiver.spans.splice(0);
    expect(shape(web)).toEqual(shape(code));
  });

  it("without a traceparent header each turn is a trace of its own", async () => {
    const served = await startDispatcher({ runtime, programs: { summarize } });
    const client = await served.connect();
    for (const text of ["one", "two"]) {
      client.send({ type: "run", program: "summarize", input: { text } });
      await client.next("turn_done");
    }
    await exported.flush();
    const spans = receiver.spans.splice(0);
    const roots = spans.filter((span) => span.parentSpanId === "");
    expect(roots.map((span) => span.name)).toEqual([
      "invoke_workflow openprogram.turn",
      "invoke_workflow openprogram.turn",
    ]);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(2);
  });
});
