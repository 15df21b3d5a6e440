import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { agenticFunction, CancelledError, RateLimitedError, sessionContext } from "../src/index.js";
import { ProviderLimits, type CapacitySlot } from "../src/entries/budgets.js";
import { createRuntime } from "../src/entries/runtime.js";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer, type TempStore } from "../src/testing/index.js";

const NEVER = new AbortController().signal;

function call(limits: ProviderLimits, sessionId: string, signal = NEVER): Promise<CapacitySlot> {
  const waiting = limits.acquire({ provider: "p", model: "m", sessionId, tokens: 10 }, signal);
  if (!waiting) throw new Error("no limit applies");
  return waiting;
}

describe("ProviderLimits", () => {
  it("serves waiting sessions in turn: one session's many calls do not starve another's", async () => {
    const limits = new ProviderLimits({ p: { maxConcurrent: 1 } });
    const first = await call(limits, "A");
    const order: string[] = [];
    const waits = ["A2", "A3", "A4", "A5", "B1"].map((name) =>
      call(limits, name.startsWith("A") ? "A" : "B").then((slot) => {
        order.push(name);
        slot.release(5);
      }),
    );
    expect(limits.capacityOf("p", "m")?.waiting()).toBe(5);
    first.release(5);
    await Promise.all(waits);
    expect(order).toEqual(["B1", "A2", "A3", "A4", "A5"]);
  });

  it("a call that waits longer than maxWaitSeconds fails with rate_limited, naming the full limit", async () => {
    const limits = new ProviderLimits({ p: { maxConcurrent: 1, maxWaitSeconds: 0.05 } });
    const held = await call(limits, "A");
    const error = await call(limits, "B").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error).toMatchObject({ code: "rate_limited", key: "p", limit: "maxConcurrent" });
    expect(limits.capacityOf("p", "m")?.waiting()).toBe(0);
    held.release(null);
    (await call(limits, "B")).release(null); // the slot given back serves the next caller at once
  });

  it("requestsPerMinute and tokensPerMinute hold requests past the minute's share", async () => {
    const perMinute = new ProviderLimits({ "p/m": { requestsPerMinute: 2, maxWaitSeconds: 0.05 } });
    (await call(perMinute, "A")).release(null);
    (await call(perMinute, "B")).release(null);
    await expect(call(perMinute, "C")).rejects.toMatchObject({ code: "rate_limited", limit: "requestsPerMinute" });
    const tokens = new ProviderLimits({ p: { tokensPerMinute: 100, maxWaitSeconds: 0.05 } });
    (await call(tokens, "A")).release(95); // what the call used replaces its estimate of 10
    await expect(call(tokens, "B")).rejects.toMatchObject({ code: "rate_limited", limit: "tokensPerMinute" });
  });

  it("a waiting call is cancelled by its signal and leaves the queue", async () => {
    const limits = new ProviderLimits({ p: { maxConcurrent: 1 } });
    const held = await call(limits, "A");
    const controller = new AbortController();
    const waiting = call(limits, "B", controller.signal);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    expect(limits.capacityOf("p", "m")?.waiting()).toBe(0);
    held.release(null);
  });

  it("refuses limits that are not ones", () => {
    expect(() => new ProviderLimits({ p: { maxConcurrent: 0 } })).toThrow("whole number of at least 1");
    expect(() => new ProviderLimits({ p: { perHour: 3 } as never })).toThrow("is not a limit");
  });
});

describe("limits on a real provider", () => {
  let store: TempStore;
  let server: FakeOpenAIServer;
  let inFlight = 0;
  let most = 0;
  let answered = 0;
  const SESSIONS = 10;
  let limits: ProviderLimits;
  beforeEach(async () => {
    limits = new ProviderLimits({ "openai/m": { maxConcurrent: 2 } });
    store = createTempStore("openprogram-limits-");
    inFlight = most = answered = 0;
    // Each request is held until every session's call is either at the server or waiting in the limiter's queue:
    // so whatever the limiter lets through at once does reach the server at once, and the server counts it. The
    // condition is polled, not checked only as requests arrive: the two let through may both arrive before the
    // other sessions (still creating theirs) reach the queue, and then no request would come to check it again.
    server = await startFakeOpenAIServer(async (request) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await vi.waitFor(
        () => {
          const queued = limits.capacityOf("openai", "m")?.waiting() ?? 0;
          if (answered + inFlight + queued < SESSIONS) throw new Error("sessions still on their way to the limiter");
        },
        { timeout: 30_000, interval: 2 },
      );
      inFlight--;
      answered++;
      return `ok ${request.json.messages?.at(-1)?.content ?? ""}`;
    });
  });
  afterEach(async () => {
    await server.close();
    store.cleanup();
  });

  it("maxConcurrent 2 with 10 sessions calling at once: never more than 2 in flight at the server, every session served", async () => {
    const runtime = createRuntime({
      provider: "openai",
      apiKey: "k",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    });
    const ask = agenticFunction({ name: "ask", doc: "Answer." }, async (input: { n: number }, { runtime: model }) =>
      model.exec(`question ${input.n}`),
    );
    const replies = await Promise.all(
      Array.from({ length: SESSIONS }, (_, n) =>
        sessionContext({ db: store.db, runtime, limits, sessionId: `s${n}` }, () => ask({ n })),
      ),
    );
    expect(replies.map((reply) => reply.startsWith("ok"))).toEqual(Array<boolean>(SESSIONS).fill(true));
    expect(server.requests).toHaveLength(SESSIONS);
    expect(most).toBe(2);
  });
});
