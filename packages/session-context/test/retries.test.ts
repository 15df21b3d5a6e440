import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  InvalidInputError,
  ModelTimeoutError,
  ProviderError,
  sessionContext,
  type ExecOptions,
  type RetryInfo,
  type SessionEvent,
  type SessionNode,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";
import { askBriefly } from "./helpers.js";

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-retries-");
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

/** Runs one exec against a fresh server answering `replies` in turn (the last one again after). */
async function run(
  provider: "openai" | "anthropic",
  replies: FakeReply[],
  options: ExecOptions,
  providerRetries?: number,
): Promise<{ result: string | Error; events: SessionEvent[]; nodes: SessionNode[] }> {
  server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(
    (_request, index) => replies[Math.min(index, replies.length - 1)] as FakeReply,
  );
  const runtime = createRuntime({
    provider,
    apiKey: "k",
    baseUrl: server.baseUrl,
    model: "m",
    ...(providerRetries !== undefined ? { maxRetries: providerRetries } : {}),
  });
  const events: SessionEvent[] = [];
  let sessionId = "";
  const result = await sessionContext({ db: store.db, runtime, onEvent: (event) => events.push(event) }, (session) => {
    sessionId = session.sessionId;
    return askBriefly({ options });
  }).catch((error: unknown) => error as Error);
  // A session that recorded nothing (options refused up front) was never created.
  const nodes = await store.db.loadNodes(sessionId).catch(() => []);
  return { result, events, nodes };
}

describe.each(["openai", "anthropic"] as const)("retries and timeoutMs against %s", (provider) => {
  it("honours a 429's retry-after, emits a retry event and calls onRetry", async () => {
    const seen: RetryInfo[] = [];
    const { result, events, nodes } = await run(
      provider,
      [{ status: 429, message: "slow down", type: "rate_limit_error", retryAfter: "0" }, "hi"],
      { onRetry: (info) => seen.push(info) },
    );
    expect(result).toBe("hi");
    expect(server?.requests).toHaveLength(2);
    expect(seen).toEqual([{ attempt: 2, delayMs: 0, reason: expect.stringContaining("slow down") as string }]);
    const retry = events.find((event) => event.type === "retry");
    const llm = nodes.find((node) => node.role === "llm") as SessionNode;
    expect(retry).toMatchObject({ type: "retry", nodeId: llm.id, attempt: 2, delayMs: 0 });
    expect(llm.metadata.status).toBe("completed");
  });

  it("retries a 5xx with backoff up to maxRetries, then reports the provider's failure", async () => {
    const { result } = await run(provider, [{ status: 503, message: "overloaded" }], { maxRetries: 1 });
    expect(result).toBeInstanceOf(ProviderError);
    expect((result as ProviderError).status).toBe(503);
    expect(server?.requests).toHaveLength(2);
  });

  it("never retries a 400", async () => {
    const { result, events } = await run(provider, [{ status: 400, message: "bad request" }, "hi"], {}, 3);
    expect(result).toBeInstanceOf(ProviderError);
    expect((result as ProviderError).status).toBe(400);
    expect(server?.requests).toHaveLength(1);
    expect(events.some((event) => event.type === "retry")).toBe(false);
  });

  it("fails with ModelTimeoutError at once when a retry's wait would pass the deadline", async () => {
    const { result, nodes } = await run(
      provider,
      [{ status: 429, message: "slow down", retryAfter: "30" }, "hi"],
      { timeoutMs: 5_000 },
      3,
    );
    expect(result).toBeInstanceOf(ModelTimeoutError);
    expect((result as ModelTimeoutError).code).toBe("model_timeout");
    expect((result as Error).message).toContain("slow down");
    expect(server?.requests).toHaveLength(1);
    const llm = nodes.find((node) => node.role === "llm") as SessionNode;
    expect(llm.metadata.status).toBe("failed");
    expect(llm.metadata.error).toMatchObject({ code: "model_timeout" });
  });

  it("cuts a slow request at the deadline with ModelTimeoutError", async () => {
    const { result } = await run(provider, [{ delayMs: 60_000, reply: "too late" }], { timeoutMs: 300 }, 3);
    expect(result).toBeInstanceOf(ModelTimeoutError);
    expect(server?.requests).toHaveLength(1);
  });
});

describe("retry options", () => {
  it("refuses a timeoutMs or maxRetries that cannot be used before sending anything", async () => {
    for (const options of [{ timeoutMs: 0 }, { timeoutMs: Number.NaN }, { maxRetries: -1 }, { maxRetries: 1.5 }]) {
      const { result } = await run("openai", ["hi"], options);
      expect(result).toBeInstanceOf(InvalidInputError);
      expect(server?.requests).toHaveLength(0);
      await server?.close();
      server = undefined;
    }
  });
});

describe("sendWithRetries (a compaction's summary request)", () => {
  it("sends a retryable failure again, up to maxRetries, and never a 400", async () => {
    const { sendWithRetries } = await import("../src/runtime/request-attempts.js");
    const signal = new AbortController().signal;
    let calls = 0;
    const flaky = (): Promise<string> =>
      ++calls === 1 ? Promise.reject(new ProviderError("openai", 429, "slow down")) : Promise.resolve("summary");
    await expect(sendWithRetries(2, signal, flaky)).resolves.toBe("summary");
    expect(calls).toBe(2);
    calls = 0;
    const refused = (): Promise<string> => (calls++, Promise.reject(new ProviderError("openai", 400, "bad")));
    await expect(sendWithRetries(2, signal, refused)).rejects.toMatchObject({ status: 400 });
    expect(calls).toBe(1);
  });
});
