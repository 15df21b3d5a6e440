import { agenticFunction, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, waitFor, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closeAll, startDispatcher, type TestDispatcher } from "./helpers.js";

const TOKEN = "metrics-test-token-0123456789";

const summarize = agenticFunction(
  { name: "summarize", doc: "Summarize the text." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);
const broken = agenticFunction({ name: "broken", doc: "Always fails." }, () => {
  throw new Error("broken on purpose");
});

let fake: FakeOpenAIServer;
let served: TestDispatcher;

beforeEach(async () => {
  fake = await startFakeOpenAIServer(() => "four");
  const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 });
  served = await startDispatcher({ runtime: runtime as Runtime, programs: { summarize, broken }, token: TOKEN });
});

afterEach(async () => {
  await closeAll();
  await fake.close();
});

async function scrape(): Promise<Map<string, ReturnType<typeof parsePrometheusTextFormat>[number]>> {
  const response = await fetch(`${served.dispatcher.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const families = parsePrometheusTextFormat(await response.text());
  return new Map(families.map((family) => [family.name, family]));
}

function value(
  families: Awaited<ReturnType<typeof scrape>>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const samples = families.get(name)?.metrics ?? [];
  const sample = samples.find((candidate) =>
    Object.entries(labels).every(([key, expected]) => candidate.labels?.[key] === expected),
  );
  return sample === undefined ? 0 : Number(sample.value ?? sample.count);
}

describe("/metrics (Prometheus text format, prom-client)", () => {
  it("needs the token like the WebSocket", async () => {
    const response = await fetch(`${served.dispatcher.url}/metrics`);
    expect(response.status).toBe(401);
    expect(await response.text()).toContain("/metrics needs the token");
  });

  it("its counters move with the turns run: started, finished, failed, durations, tokens, connections", async () => {
    const before = await scrape();
    const client = await served.connect({ headers: { authorization: `Bearer ${TOKEN}` } });
    for (const text of ["one", "two"]) {
      client.send({ type: "run", program: "summarize", input: { text } });
      await client.next("turn_done");
    }
    client.send({ type: "run", program: "broken", input: {} });
    await client.next("turn_failed");
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      value(after, name, labels) - value(before, name, labels);

    const web = { source: "web" };
    expect(delta("openprogram_turns_started_total", { ...web, program: "summarize" })).toBe(2);
    expect(delta("openprogram_turns_finished_total", { ...web, program: "summarize" })).toBe(2);
    expect(delta("openprogram_turns_started_total", { ...web, program: "broken" })).toBe(1);
    expect(delta("openprogram_turns_failed_total", { ...web, program: "broken", outcome: "failed" })).toBe(1);
    expect(delta("openprogram_turns_finished_total", { ...web, program: "broken" })).toBe(0);
    // The parser folds a histogram's series into one (labels dropped): exact counts are read where there is one series.
    expect(after.get("openprogram_turn_duration_seconds")?.type).toBe("HISTOGRAM");
    const modelRequests = after.get("openprogram_model_request_duration_seconds");
    expect(modelRequests?.type).toBe("HISTOGRAM");
    expect(before.get("openprogram_model_request_duration_seconds")?.metrics).toEqual([]);
    expect(Number(modelRequests?.metrics[0]?.buckets?.["+Inf"])).toBe(2);
    // The fake server reports the reply's length as the output tokens.
    expect(delta("openprogram_model_tokens_total", { model: "fake-model", type: "output" })).toBe(2 * "four".length);
    const input = fake.requests.reduce((sum, request) => sum + request.body.length, 0);
    expect(delta("openprogram_model_tokens_total", { model: "fake-model", type: "input" })).toBe(input);
    expect(value(after, "openprogram_websocket_connections")).toBe(1);
    expect(value(after, "openprogram_sessions", { state: "running" })).toBe(0);
    expect(after.has("nodejs_eventloop_lag_seconds")).toBe(true);
  });

  it("counts model requests a budget refused, and the turn fails with budget_exceeded naming it", async () => {
    const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 });
    served = await startDispatcher({
      runtime: runtime as Runtime,
      programs: { summarize },
      token: TOKEN,
      budgets: { turn: { tokens: 5 } },
    });
    const client = await served.connect({ headers: { authorization: `Bearer ${TOKEN}` } });
    client.send({ type: "run", program: "summarize", input: { text: "far more than five tokens of text to read" } });
    const failed = await client.next("turn_failed");
    expect(failed).toMatchObject({ error: { code: "budget_exceeded" } });
    expect(JSON.stringify(failed)).toContain("The turn token budget is exceeded: limit 5 tokens");
    expect(fake.requests).toHaveLength(0);
    const after = await scrape();
    expect(
      value(after, "openprogram_model_requests_refused_total", { model: "fake-model", reason: "budget_exceeded" }),
    ).toBe(1);
  });

  it("counts what the requests cost at the budgets' prices, beside the tokens", async () => {
    const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 });
    served = await startDispatcher({
      runtime: runtime as Runtime,
      programs: { summarize },
      token: TOKEN,
      budgets: { prices: { prices: { "fake-model": { input: 1, output: 2 } }, source: "test", path: null } },
    });
    const client = await served.connect({ headers: { authorization: `Bearer ${TOKEN}` } });
    client.send({ type: "run", program: "summarize", input: { text: "a short text" } });
    await client.next("turn_done");
    // The fake server reports the request body's length as input tokens and the reply's ("four") as output.
    const input = fake.requests.reduce((sum, request) => sum + request.body.length, 0);
    const after = await scrape();
    expect(fake.requests).toHaveLength(1);
    expect(value(after, "openprogram_model_cost_dollars_total", { model: "fake-model" })).toBeCloseTo(
      (input * 1 + 4 * 2) / 1_000_000,
      12,
    );
  });

  it("counts model requests the provider's capacity refused (rate_limited) beside the budgets' refusals", async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await fake.close();
    fake = await startFakeOpenAIServer(async () => {
      await held;
      return "four";
    });
    const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 });
    served = await startDispatcher({
      runtime: runtime as Runtime,
      programs: { summarize },
      token: TOKEN,
      providerLimits: { "openai/fake-model": { maxConcurrent: 1, maxWaitSeconds: 0 } },
    });
    const headers = { authorization: `Bearer ${TOKEN}` };
    const [first, second] = [await served.connect({ headers }), await served.connect({ headers })];
    first.send({ type: "run", program: "summarize", input: { text: "one" } });
    await waitFor(() => fake.requests.length === 1, "the first request to reach the provider", 10_000);
    second.send({ type: "run", program: "summarize", input: { text: "two" } });
    expect(await second.next("turn_failed")).toMatchObject({ error: { code: "rate_limited" } });
    release();
    await first.next("turn_done");
    expect(fake.requests).toHaveLength(1);
    const after = await scrape();
    expect(
      value(after, "openprogram_model_requests_refused_total", { model: "fake-model", reason: "rate_limited" }),
    ).toBe(1);
  });
});
