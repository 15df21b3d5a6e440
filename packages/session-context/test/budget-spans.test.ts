import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, sessionContext } from "../src/index.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

const exporter = new InMemorySpanExporter();
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
let store: TempStore;
beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});
beforeEach(() => {
  store = createTempStore("openprogram-budget-spans-");
  exporter.reset();
});
afterEach(() => store.cleanup());

const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (_input: object, { runtime }) =>
  runtime.exec("The question.", { maxTokens: 100 }),
);

describe("spans of a call a budget stopped", () => {
  it("carry the budget: scope, dimension and limit, with error.type budget_exceeded", async () => {
    const { runtime, provider: scripted } = scriptedRuntime(["never sent"]);
    await expect(
      sessionContext({ db: store.db, runtime, budgets: { turn: { tokens: 50 } } }, () => ask({})),
    ).rejects.toMatchObject({ code: "budget_exceeded" });
    expect(scripted.requests).toHaveLength(0);
    const chat = exporter.getFinishedSpans().find((span) => span.name.startsWith("chat"));
    expect(chat?.attributes).toMatchObject({
      "error.type": "budget_exceeded",
      "openprogram.budget.scope": "turn",
      "openprogram.budget.dimension": "tokens",
      "openprogram.budget.limit": 50,
    });
  });

  it("a call that crossed a budget after it answered: the spans it stops carry the budget and what was spent", async () => {
    const { runtime } = scriptedRuntime([{ reply: "paid for", usage: { inputTokens: 1000, outputTokens: 0 } }]);
    await expect(
      sessionContext({ db: store.db, runtime, budgets: { session: { tokens: 500 } } }, () => ask({})),
    ).rejects.toMatchObject({ code: "budget_exceeded", scope: "session" });
    const spans = exporter.getFinishedSpans();
    // The model call itself succeeded (it was sent and answered); the function it ran in is what the budget stopped.
    expect(spans.find((span) => span.name.startsWith("chat"))?.attributes["error.type"]).toBeUndefined();
    const stopped = spans.filter((span) => span.attributes["error.type"] === "budget_exceeded");
    expect(stopped.length).toBeGreaterThan(0);
    for (const span of stopped)
      expect(span.attributes).toMatchObject({
        "openprogram.budget.scope": "session",
        "openprogram.budget.dimension": "tokens",
        "openprogram.budget.limit": 500,
        "openprogram.budget.spent": 1000,
      });
    expect(stopped.map((span) => span.name)).toContain("invoke_agent ask");
  });

  it("a session wall-time budget already used up: the refused call's span says so", async () => {
    const { runtime, provider: scripted } = scriptedRuntime(["never sent"]);
    await expect(
      sessionContext({ db: store.db, runtime, budgets: { session: { seconds: 0 } } }, () => ask({})),
    ).rejects.toMatchObject({ code: "budget_exceeded" });
    expect(scripted.requests).toHaveLength(0);
    const chat = exporter.getFinishedSpans().find((span) => span.name.startsWith("chat"));
    expect(chat?.attributes).toMatchObject({
      "error.type": "budget_exceeded",
      "openprogram.budget.scope": "session",
      "openprogram.budget.dimension": "seconds",
      "openprogram.budget.limit": 0,
    });
  });
});
