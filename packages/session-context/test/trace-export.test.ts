import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { traceExportConfigured } from "../src/entries/telemetry.js";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer, type TempStore } from "../src/testing/index.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "@openprogram/otlp-receiver";
import { childScript, runTsChild } from "./helpers.js";

let store: TempStore;
let server: FakeOpenAIServer;
let receiver: OtlpReceiver;
beforeAll(async () => {
  server = await startFakeOpenAIServer(() => "done");
});
afterAll(() => server.close());
beforeEach(async () => {
  store = createTempStore();
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await receiver.close();
  store.cleanup();
});

function run(env: NodeJS.ProcessEnv) {
  return runTsChild(childScript("traced-turn.ts"), [], {
    OPENPROGRAM_HOME: store.home,
    FAKE_OPENAI_URL: server.baseUrl,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: undefined,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: undefined,
    OTEL_SERVICE_NAME: undefined,
    ...env,
  });
}

/**
 * The run with the default protocol and its spans, which the first two tests both read and neither changes:
 * made once per file (by whichever test comes first, in its store and receiver) rather than once per test.
 */
let defaultRun: Promise<{ child: Awaited<ReturnType<typeof run>>; spans: ReceivedSpan[] }> | undefined;
function runWithDefaults() {
  defaultRun ??= run({}).then((child) => ({ child, spans: receiver.spans.splice(0) }));
  return defaultRun;
}

/** The span tree as names, children sorted: what every entry must produce alike. */
function tree(spans: readonly ReceivedSpan[]): string[] {
  const lines: string[] = [];
  const walk = (parent: string, depth: number): void => {
    const children = spans.filter((span) => span.parentSpanId === parent).sort((a, b) => a.name.localeCompare(b.name));
    for (const child of children) {
      lines.push(`${"  ".repeat(depth)}${child.name}`);
      walk(child.spanId, depth + 1);
    }
  };
  walk("", 0);
  return lines;
}

const REFERENCE_TREE = [
  "invoke_workflow openprogram.turn",
  "  invoke_agent reference",
  "    invoke_agent in_child",
  "      invoke_agent summarise",
  "        chat fake-model",
  "    invoke_agent outline",
  "      chat fake-model",
];

// Each run is a TypeScript child process that starts another one (about 2 s each on a quiet machine, 18 s with
// the machine loaded 6x, and over 60 s for the two runs of one test loaded 20x): a bound on a hang, not on speed.
describe("OTLP export configured by OTEL_* variables", { timeout: 180_000 }, () => {
  it("http/protobuf (the default): one trace for the turn, the child process's spans under the parent's call", async () => {
    const { child, spans } = await runWithDefaults();
    expect(child.stderr).toBe("");
    expect(child.code).toBe(0);
    const { session } = JSON.parse(child.stdout) as { session: string };
    expect(tree(spans)).toEqual(REFERENCE_TREE);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(spans.every((span) => span.encoding === "protobuf" && span.service === "openprogram")).toBe(true);
    expect(spans.every((span) => span.attributes["gen_ai.conversation.id"] === session)).toBe(true);
    const chat = spans.find((span) => span.name === "chat fake-model");
    expect(chat?.kind).toBe(3);
    expect(chat?.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "fake-model",
      "gen_ai.response.model": "fake-model",
      "gen_ai.usage.output_tokens": "done".length,
      "gen_ai.response.finish_reasons": ["stop"],
    });
  });

  it("http/json with OTEL_SERVICE_NAME: the same tree and attributes apart from ids and times", async () => {
    const { child: protobuf, spans: first } = await runWithDefaults();
    expect(protobuf.code).toBe(0);
    const json = await run({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "trips" });
    expect(json.stderr).toBe("");
    const second = receiver.spans;
    expect(second.every((span) => span.encoding === "json" && span.service === "trips")).toBe(true);
    expect(tree(second)).toEqual(REFERENCE_TREE);
    const comparable = (spans: readonly ReceivedSpan[]) =>
      spans
        .map((span) => ({
          name: span.name,
          kind: span.kind,
          statusCode: span.statusCode,
          attributes: Object.fromEntries(
            Object.entries(span.attributes).filter(
              ([key]) => !["gen_ai.conversation.id", "openprogram.node.id", "openprogram.turn.id"].includes(key),
            ),
          ),
        }))
        // Spans of the same name (two chat requests) arrive in whichever order their batches were exported.
        .sort((a, b) => a.name.localeCompare(b.name) || JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(comparable(second)).toEqual(comparable(first));
  });

  it("an unreachable collector never fails the turn: one warning, the run's result unchanged", async () => {
    const closed = await startOtlpReceiver();
    await closed.close();
    const child = await run({ OTEL_EXPORTER_OTLP_ENDPOINT: closed.endpoint });
    expect(child.code).toBe(0);
    expect(JSON.parse(child.stdout)).toMatchObject({ outline: "done", summary: '"done"' });
    // The parent and its child process each warn once.
    expect(child.stderr.match(/Could not export spans to the OTLP collector/g)).toHaveLength(2);
  });

  it("an unsupported protocol is said, and nothing is exported", async () => {
    const child = await run({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
    expect(child.code).toBe(0);
    expect(child.stderr).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported; use http\/protobuf or http\/json/);
    expect(receiver.spans).toEqual([]);
  });

  it("is configured only by an OTLP endpoint, and not when disabled", () => {
    expect(traceExportConfigured({})).toBe(false);
    expect(traceExportConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(traceExportConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://127.0.0.1:4318/v1/traces" })).toBe(true);
    expect(traceExportConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(traceExportConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://x", OTEL_TRACES_EXPORTER: "none" })).toBe(
      false,
    );
  });
});
