// timeoutMs covers the whole exec, its tool loop included (issue 33): a deadline
// reached while a tool runs aborts the tool's signal (a plain tool) or its
// context's (an agentic function's nested calls), records the interrupted node
// `cancelled`, and fails the exec with ModelTimeoutError. Against a real
// chat-completions server on loopback.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  CancelledError,
  ModelTimeoutError,
  sessionContext,
  tool,
  type ExecOptions,
  type SessionNode,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer, type TempStore } from "../src/testing/index.js";

let store: TempStore;
let server: FakeOpenAIServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-exec-deadline-");
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

/** What the plain tool saw of its signal. */
let toolSignal: { aborted: boolean; reason: unknown } | null = null;
/** Called once the plain tool runs (a test's own stop lands there). */
let whileToolRuns: () => void = () => undefined;

/** Waits for the tide until its signal aborts (at most 20 s, so a broken deadline fails the test, not the run). */
const waitForTide = tool({
  name: "wait_for_tide",
  description: "Waits for the high tide.",
  input: { type: "object", properties: {} },
  execute: (_input, { signal }) =>
    new Promise<string>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        toolSignal = { aborted: signal.aborted, reason: signal.reason };
        resolve("the tide came");
      };
      const timer = setTimeout(done, 20_000);
      signal.addEventListener("abort", done, { once: true });
      whileToolRuns();
    }),
});

/** An agentic function as a tool: its nested exec is the request the server never answers in time. */
const askHarbour = agenticFunction(
  { name: "ask_harbour", doc: "Ask the harbour master." },
  async (_input: Record<string, never>, { runtime }) => runtime.exec("When is high tide?"),
);

const plan = agenticFunction(
  { name: "plan_sail", doc: "Plan the sail. Use the tools." },
  async ({ options }: { options: ExecOptions }, { runtime }) =>
    runtime.exec("Plan a sail for this afternoon.", { tools: [waitForTide, askHarbour], ...options }),
);

/** The model asks for `toolName` first; a nested request (the harbour master's) is answered after a minute. */
async function run(
  toolName: string,
  options: ExecOptions,
): Promise<{ result: unknown; nodes: SessionNode[]; requests: number }> {
  server = await startFakeOpenAIServer((request) => {
    const system = (request.json.messages as Array<{ role: string; content: unknown }>)[0]?.content;
    if (system === "Ask the harbour master.") return { delayMs: 60_000, reply: "At four." };
    return { toolCalls: [{ id: "call_1", name: toolName, arguments: {} }] };
  });
  const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
  let sessionId = "";
  const result = await sessionContext({ db: store.db, runtime }, (session) => {
    sessionId = session.sessionId;
    return plan({ options });
  }).catch((error: unknown) => error);
  return { result, nodes: await store.db.loadNodes(sessionId), requests: server.requests.length };
}

function byName(nodes: readonly SessionNode[], name: string, role = "code"): SessionNode | undefined {
  return nodes.find((node) => node.name === name && node.role === role);
}

beforeEach(() => {
  toolSignal = null;
  whileToolRuns = () => undefined;
});

describe("an exec's timeoutMs over its tool loop", () => {
  it("aborts a plain tool still running at the deadline, records it cancelled, and fails with ModelTimeoutError", async () => {
    const { result, nodes, requests } = await run("wait_for_tide", { timeoutMs: 500 });
    expect(result).toBeInstanceOf(ModelTimeoutError);
    expect(result).toMatchObject({ code: "model_timeout", timeoutMs: 500, attempts: 1 });
    expect(toolSignal).toEqual({ aborted: true, reason: "the exec's timeoutMs of 500 ms has passed" });
    expect(requests).toBe(1); // no request after the interrupted tool
    const tide = byName(nodes, "wait_for_tide");
    expect(tide?.metadata).toMatchObject({ status: "cancelled", tool_call_id: "call_1", is_error: true });
    expect(tide?.metadata.error).toMatchObject({ code: "cancelled" });
    expect(byName(nodes, "m", "llm")?.metadata.status).toBe("completed");
    expect(byName(nodes, "plan_sail")?.metadata).toMatchObject({ status: "failed", error: { code: "model_timeout" } });
  });

  it("cancels an agentic function's nested request at the deadline and records both nodes cancelled", async () => {
    const { result, nodes, requests } = await run("ask_harbour", { timeoutMs: 500 });
    expect(result).toBeInstanceOf(ModelTimeoutError);
    expect(result).toMatchObject({ code: "model_timeout", attempts: 1 });
    expect(requests).toBe(2); // the plan's, then the harbour master's, cut short
    const harbour = byName(nodes, "ask_harbour");
    expect(harbour?.metadata).toMatchObject({ status: "cancelled", tool_call_id: "call_1" });
    const nested = nodes.find((node) => node.role === "llm" && node.caller === harbour?.id);
    expect(nested?.metadata.status).toBe("cancelled");
    expect(byName(nodes, "plan_sail")?.metadata).toMatchObject({ status: "failed", error: { code: "model_timeout" } });
  });

  it("stays a cancellation when the exec's own signal stops the tool before the deadline", async () => {
    const stop = new AbortController();
    whileToolRuns = () => stop.abort("stopped by the user");
    const { result, nodes } = await run("wait_for_tide", { timeoutMs: 20_000, signal: stop.signal });
    expect(result).toBeInstanceOf(CancelledError);
    expect(toolSignal?.aborted).toBe(true);
    expect(byName(nodes, "wait_for_tide")?.metadata.status).toBe("cancelled");
  });

  it("without timeoutMs, a tool runs to its end", async () => {
    let calls = 0;
    server = await startFakeOpenAIServer(() =>
      calls++ === 0 ? { toolCalls: [{ id: "call_1", name: "wait_for_tide", arguments: {} }] } : "Sail at four.",
    );
    whileToolRuns = () => undefined;
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    const quick = tool({
      name: "wait_for_tide",
      description: "Waits for the high tide.",
      input: { type: "object", properties: {} },
      execute: async (_input, { signal }) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return signal.aborted ? "aborted" : "the tide came";
      },
    });
    const result = await sessionContext({ db: store.db, runtime }, () =>
      agenticFunction({ name: "quick", doc: "Plan." }, async (_input: Record<string, never>, { runtime: r }) =>
        r.exec("Plan.", { tools: [quick] }),
      )({}),
    );
    expect(result).toBe("Sail at four.");
  });
});
