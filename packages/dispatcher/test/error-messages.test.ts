import { trace, SpanStatusCode } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { agenticFunction } from "@openprogram/session-context";
import { setTraceErrorMessages } from "@openprogram/session-context/telemetry";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeAll, startDispatcher } from "./helpers.js";

// A failure whose message quotes what the user typed: the kind of text logs and spans must not carry by default.
const SECRET = "my-card-4111-1111";
const leaky = agenticFunction(
  { name: "leaky", doc: "Fails quoting its input." },
  async ({ text }: { text: string }) => {
    throw new Error(`could not handle the prompt ${JSON.stringify(text)}`);
  },
);

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });

beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterEach(async () => {
  await closeAll();
  exporter.reset();
  setTraceErrorMessages(null);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

async function failedTurn(errorMessages?: boolean) {
  const served = await startDispatcher({
    runtime: scriptedRuntime([]).runtime,
    programs: { leaky },
    ...(errorMessages !== undefined ? { errorMessages } : {}),
  });
  const client = await served.connect();
  client.send({ type: "run", program: "leaky", input: { text: SECRET } });
  const failed = await client.next("turn_failed");
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const failing = spans.filter((span) => span.status.code === SpanStatusCode.ERROR);
  expect(failing.map((span) => span.name).sort()).toEqual(["invoke_agent leaky", "invoke_workflow openprogram.turn"]);
  return { failed, failing, logs: served.logs };
}

function exceptionEvents(spans: readonly ReadableSpan[]) {
  return spans.flatMap((span) => span.events.filter((event) => event.name === "exception"));
}

describe("error messages in spans and logs: one policy, off by default (issue 30, item 13)", () => {
  it("by default spans carry the error's type, an exception event without message or stack; logs the code", async () => {
    const { failed, failing, logs } = await failedTurn();
    // The client that ran the turn is told what went wrong; telemetry is not.
    expect(failed.error.message).toContain(SECRET);
    for (const span of failing) {
      expect(span.attributes["error.type"], span.name).toBe("Error");
      expect(span.status.message ?? "", span.name).toBe("");
    }
    const events = exceptionEvents(failing);
    expect(events.length).toBe(failing.length);
    for (const event of events) {
      expect(event.attributes).toEqual({ "exception.type": "Error" });
    }
    expect(
      JSON.stringify(exporter.getFinishedSpans().map((span) => [span.attributes, span.events, span.status])),
    ).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(logs.find((entry) => entry.event === "turn_end")).toMatchObject({ outcome: "failed" });
  });

  it("errorMessages: true records the message and the stack on the failing spans", async () => {
    const { failing } = await failedTurn(true);
    for (const span of failing) expect(span.status.message, span.name).toContain(SECRET);
    for (const event of exceptionEvents(failing)) {
      expect(event.attributes?.["exception.message"]).toContain(SECRET);
      expect(String(event.attributes?.["exception.stacktrace"])).toMatch(/at /);
    }
  });

  it("OPENPROGRAM_ERROR_MESSAGES=1 is the same opt-in for a server started without the option", async () => {
    process.env.OPENPROGRAM_ERROR_MESSAGES = "1";
    try {
      const { failing } = await failedTurn();
      for (const span of failing) expect(span.status.message, span.name).toContain(SECRET);
    } finally {
      delete process.env.OPENPROGRAM_ERROR_MESSAGES;
    }
  });
});
