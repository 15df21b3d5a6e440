// A call inside an agentic function writes its running llm node only once its request has been out
// RUNNING_NODE_DELAY_MS: a reply that comes sooner is written once, completed (or failed), and listeners in the
// process are told exactly what they are told when the running node is written (its append, the deltas, the
// update). Against a real HTTP server speaking OpenAI's streamed protocol. The delay is pinned where a test must not
// depend on how fast a loaded machine answers.
import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CancelledError,
  chat,
  ProviderError,
  sessionContext,
  type ExecOptions,
  type SessionEvent,
  type SessionNode,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { SessionDB } from "../src/entries/store.js";
import { RUNNING_NODE_DELAY_MS, runningNodeDelay } from "../src/runtime/running-node.js";
import { storeInternals } from "../src/store/internal.js";
import { nodeFileName } from "../src/store/layout.js";
import {
  createTempStore,
  startFakeOpenAIServer,
  waitFor,
  type FakeProviderServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";
import { askBriefly } from "./helpers.js";

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-running-delay-");
});
afterEach(async () => {
  runningNodeDelay.ms = RUNNING_NODE_DELAY_MS;
  store.cleanup();
  await server?.close();
  server = undefined;
});

interface Run {
  result: unknown;
  events: SessionEvent[];
  llm: SessionNode;
  /** How many times the llm node's file was written (its lines in the session's change journal). */
  llmWrites: number;
}

async function run(replies: FakeReply[], entry: (options: ExecOptions) => Promise<unknown>): Promise<Run> {
  server = await startFakeOpenAIServer((_request, index) => replies[Math.min(index, replies.length - 1)] as FakeReply);
  const runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m" });
  const events: SessionEvent[] = [];
  let sessionId = "";
  const result = await sessionContext({ db: store.db, runtime, onEvent: (event) => events.push(event) }, (session) => {
    sessionId = session.sessionId;
    return entry({ maxRetries: 1 });
  }).catch((error: unknown) => error);
  const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm") as SessionNode;
  const journal = readFileSync(storeInternals(store.db).paths(sessionId).journal, "utf8").split("\n");
  const llmWrites = journal.filter((line) => line === nodeFileName(llm.seq, "llm", llm.id)).length;
  return { result, events, llm, llmWrites };
}

/** The events about the llm node, as `kind:detail` strings in order. */
function llmEvents(events: readonly SessionEvent[], nodeId: string): string[] {
  return events.flatMap((event) => {
    if (event.type === "node" && event.node.id === nodeId)
      return [`${event.op}:${String(event.node.metadata.status)}:${String(event.node.output)}`];
    if (event.type === "delta" && event.nodeId === nodeId) return [`delta:${event.text}`];
    if (event.type === "retry" && event.nodeId === nodeId) return [`retry:${event.attempt}`];
    return [];
  });
}

describe("a model call's running node inside an agentic function", () => {
  it("is never written when the reply comes first: one write, completed, and the usual events", async () => {
    runningNodeDelay.ms = 60_000;
    const { result, events, llm, llmWrites } = await run([{ chunks: ["Hel", "lo"] }], (options) =>
      askBriefly({ options }),
    );
    expect(result).toBe("Hello");
    expect(llmWrites).toBe(1);
    expect(llm.metadata).toMatchObject({ status: "completed", provider: "openai" });
    expect(llm.output).toBe("Hello");
    expect(llmEvents(events, llm.id)).toEqual(["append:running:null", "delta:Hello", "update:completed:Hello"]);
    // The running node announced is the stored one before its outcome: same place, same prompt, same digest.
    const announced = events.find(
      (event) => event.type === "node" && event.op === "append" && event.node.id === llm.id,
    );
    expect(announced).toMatchObject({
      node: {
        seq: llm.seq,
        caller: llm.caller,
        reads: llm.reads,
        metadata: { prompt_sha256: llm.metadata.prompt_sha256, prompt_text: "Say hi" },
      },
    });
    expect(announced?.type === "node" && "duration_seconds" in announced.node.metadata).toBe(false);
  });

  it("is on disk while a slower request is asked, then updated", async () => {
    runningNodeDelay.ms = 20;
    server = await startFakeOpenAIServer(() => ({ delayMs: 60_000, reply: "late" }));
    const runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m" });
    const stop = new AbortController();
    let sessionId = "";
    const running = sessionContext({ db: store.db, runtime, signal: stop.signal }, (session) => {
      sessionId = session.sessionId;
      return askBriefly({ options: {} });
    }).catch((error: unknown) => error);
    // What another process sees while the request waits.
    const other = new SessionDB({ root: store.root });
    await waitFor(
      async () =>
        sessionId !== "" &&
        (await other.loadNodes(sessionId)).some((node) => node.role === "llm" && node.metadata.status === "running"),
      "the running llm node on disk",
    );
    stop.abort();
    await running;
    const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm");
    expect(llm?.metadata.status).toBe("cancelled");
    const journal = readFileSync(storeInternals(store.db).paths(sessionId).journal, "utf8").split("\n");
    expect(journal.filter((line) => line === nodeFileName(llm?.seq ?? 0, "llm", llm?.id ?? "")).length).toBe(2);
  });

  it("is appended whole, cancelled, when the call is stopped first, with the same events", async () => {
    runningNodeDelay.ms = 60_000;
    server = await startFakeOpenAIServer(() => ({ delayMs: 600_000, reply: "never" }));
    const runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m" });
    const stop = new AbortController();
    const events: SessionEvent[] = [];
    let sessionId = "";
    const running = sessionContext(
      { db: store.db, runtime, signal: stop.signal, onEvent: (event) => events.push(event) },
      (session) => {
        sessionId = session.sessionId;
        return askBriefly({ options: {} });
      },
    ).catch((error: unknown) => error);
    await waitFor(() => server?.requests.length === 1, "the request to reach the server");
    stop.abort();
    expect(await running).toBeInstanceOf(CancelledError);
    const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm") as SessionNode;
    expect(llm.metadata.status).toBe("cancelled");
    const journal = readFileSync(storeInternals(store.db).paths(sessionId).journal, "utf8").split("\n");
    expect(journal.filter((line) => line === nodeFileName(llm.seq, "llm", llm.id))).toHaveLength(1);
    expect(llmEvents(events, llm.id)).toEqual(["append:running:null", "update:cancelled:null"]);
  });

  it("that cannot be written when its delay ends stops the request: the call fails with the write's error", async () => {
    runningNodeDelay.ms = 5;
    // A reply that never comes in the test's time: the call ends only because its request is stopped.
    server = await startFakeOpenAIServer(() => ({ delayMs: 600_000, reply: "Too late." }));
    const runtime = createRuntime({ provider: "openai", apiKey: "k", baseUrl: server.baseUrl, model: "m" });
    const db = store.db as unknown as { appendNode: (...args: unknown[]) => Promise<SessionNode> };
    const append = db.appendNode.bind(db);
    db.appendNode = async (...args: unknown[]) => {
      if ((args[1] as { role?: string }).role === "llm") throw new Error("the disk refused the llm node");
      return append(...args);
    };
    let sessionId = "";
    const result = await sessionContext({ db: store.db, runtime }, (session) => {
      sessionId = session.sessionId;
      return askBriefly({ options: {} });
    }).catch((error: unknown) => error);
    expect((result as Error).message).toMatch(/the disk refused the llm node/);
    expect((await store.db.loadNodes(sessionId)).filter((node) => node.role === "llm")).toEqual([]);
  });

  it("is appended whole, failed, when the request fails first, with the same events", async () => {
    runningNodeDelay.ms = 60_000;
    const { result, events, llm, llmWrites } = await run([{ status: 400, message: "bad request" }], (options) =>
      askBriefly({ options }),
    );
    expect(result).toBeInstanceOf(ProviderError);
    expect(llmWrites).toBe(1);
    expect(llm.metadata).toMatchObject({ status: "failed", partial_output: "" });
    expect(llmEvents(events, llm.id)).toEqual(["append:running:null", "update:failed:null"]);
  });

  it("is written before a retry is reported against it", async () => {
    runningNodeDelay.ms = 60_000;
    const { result, events, llm, llmWrites } = await run(
      [{ status: 429, message: "slow down", retryAfter: "0" }, "hi"],
      (options) => askBriefly({ options }),
    );
    expect(result).toBe("hi");
    expect(llmWrites).toBe(2);
    expect(llmEvents(events, llm.id)).toEqual(["append:running:null", "retry:2", "delta:hi", "update:completed:hi"]);
  });

  it("a top-level reply (a chat's) is still written at once, running, where it hangs on the head", async () => {
    runningNodeDelay.ms = 60_000;
    const { result, llm, llmWrites } = await run(["Hi there."], () => chat("Hello"));
    expect(result).toBe("Hi there.");
    expect(llmWrites).toBe(2);
    expect(llm.metadata.status).toBe("completed");
  });
});
