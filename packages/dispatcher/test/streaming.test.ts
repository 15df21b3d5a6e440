// Replies stream to the session's clients as `delta` frames: through a real dispatcher, real
// WebSocket clients over loopback, and a real loopback server speaking the OpenAI streaming protocol.
import type { Runtime, SessionNode } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, waitFor, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DELTA_INTERVAL_MS } from "../src/index.js";
import { asFrame, closeAll, startDispatcher, type Frame, type TestClient, type TestDispatcher } from "./helpers.js";

let fake: FakeOpenAIServer;
let served: TestDispatcher;

const words = (count: number): string[] => Array.from({ length: count }, (_, index) => `w${index} `);

beforeEach(async () => {
  fake = await startFakeOpenAIServer();
  const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
  served = await startDispatcher({ runtime });
});
afterEach(async () => {
  await closeAll();
  await fake.close();
});

/** The llm node's frames and the deltas between them, as a client received them. */
function replyFrames(client: TestClient): { append: SessionNode; update: SessionNode | null; deltas: Frame[] } {
  const frames = client.frames;
  const appendAt = frames.findIndex(
    (frame) => frame.type === "node" && frame.op === "append" && frame.node.role === "llm",
  );
  const append = (frames[appendAt] as Extract<Frame, { type: "node" }>).node;
  const updateAt = frames.findIndex(
    (frame) => frame.type === "node" && frame.op === "update" && frame.node.id === append.id,
  );
  const update = updateAt === -1 ? null : (frames[updateAt] as Extract<Frame, { type: "node" }>).node;
  const deltas = frames.filter((frame) => frame.type === "delta" && frame.node_id === append.id);
  return { append, update, deltas };
}

describe("delta frames", () => {
  it("reach the client between the llm node's append and its update, before turn_done, adding up to the reply", async () => {
    const chunks = words(40);
    fake.setHandler(() => ({ chunks, chunkDelayMs: 10 }));
    const client = await served.connect();
    client.send({ type: "chat", text: "hello" });
    await client.next("turn_done");
    const { append, update, deltas } = replyFrames(client);
    expect(append.metadata.status).toBe("running");
    expect(update?.metadata.status).toBe("completed");
    expect(update?.output).toBe(chunks.join(""));
    expect(client.deltaText(append.id)).toBe(chunks.join(""));
    const positions = deltas.map((frame) => client.frames.indexOf(frame));
    const updateAt = client.frames.findIndex((frame) => frame.type === "node" && frame.node === update);
    expect(
      positions.every(
        (at) =>
          at > client.frames.findIndex((frame) => frame.type === "node" && frame.node === append) && at < updateAt,
      ),
    ).toBe(true);
    expect(deltas[0]).toMatchObject({
      type: "delta",
      session_id: update?.id === append.id ? client.frames.find((frame) => frame.type === "session")?.session_id : "",
      node_id: append.id,
    });
  });

  it("are coalesced: at most one frame per node per interval", async () => {
    const chunks = words(400);
    fake.setHandler(() => ({ chunks, chunkDelayMs: 1 }));
    const client = await served.connect();
    const started = performance.now();
    client.send({ type: "chat", text: "hello" });
    await client.next("turn_done");
    const elapsed = performance.now() - started;
    const { append, deltas } = replyFrames(client);
    expect(client.deltaText(append.id)).toBe(chunks.join(""));
    // The first goes at once, each later one at least an interval after the one before, and the last when the reply ends.
    expect(deltas.length).toBeLessThanOrEqual(Math.floor(elapsed / DELTA_INTERVAL_MS) + 2);
    expect(deltas.length).toBeLessThan(chunks.length);
  });

  it("a client subscribing mid-stream gets the text so far in one frame, then the rest: nothing missing, nothing twice", async () => {
    const chunks = words(80);
    fake.setHandler(() => ({ chunks, chunkDelayMs: 15 }));
    const starter = await served.connect();
    starter.send({ type: "chat", text: "hello" });
    const { session_id: sessionId } = await starter.next("session");
    await waitFor(() => starter.frames.filter((frame) => frame.type === "delta").length >= 3, "a few deltas");
    const late = await served.connect();
    late.send({ type: "subscribe", session_id: sessionId });
    await late.next("subscribed");
    const catchUp = await late.next("delta");
    await starter.next("turn_done");
    await late.next("turn_done");
    const nodeId = catchUp.node_id;
    expect(catchUp.text.length).toBeGreaterThan(0);
    expect(chunks.join("").startsWith(catchUp.text)).toBe(true);
    expect(catchUp.text.length).toBeLessThan(chunks.join("").length);
    expect(late.deltaText(nodeId)).toBe(chunks.join(""));
    expect(starter.deltaText(nodeId)).toBe(chunks.join(""));
    // The late client's first delta is the whole text so far; it saw the node's final update too.
    expect(late.frames.find((frame) => frame.type === "delta")).toBe(catchUp);
    const final = await late.next("node", (frame) => frame.op === "update" && frame.node.id === nodeId);
    expect(final.node.output).toBe(chunks.join(""));
  });

  it("stop mid-stream cancels the turn at once and records the partial text the clients saw", async () => {
    fake.setHandler(() => ({ chunks: words(600), chunkDelayMs: 20 }));
    const client = await served.connect();
    client.send({ type: "chat", text: "hello" });
    const { session_id: sessionId } = await client.next("session");
    await waitFor(() => client.frames.filter((frame) => frame.type === "delta").length >= 2, "a couple of deltas");
    client.send({ type: "stop", session_id: sessionId });
    const failed = await client.next("turn_failed");
    expect(failed.error.code).toBe("cancelled");
    const { append, update } = replyFrames(client);
    expect(update?.metadata.status).toBe("cancelled");
    const partial = update?.metadata.partial_output as string;
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(words(600).join("").length);
    // Every delta went out before the final update, so the clients' text is the recorded partial text.
    expect(client.deltaText(append.id)).toBe(partial);
    const stored = (await served.store.db.loadNodes(sessionId)).find((node) => node.id === append.id);
    expect(stored?.metadata).toMatchObject({ status: "cancelled", partial_output: partial });
    await waitFor(() => fake.requests[0]?.timing.closedAt !== null, "the provider request to be aborted", 5_000);
  });
});

describe("streamed usage", () => {
  it("the counts the stream ended with are on the llm node and in session_detail's usage, per turn and in total", async () => {
    fake.setHandler(() => ({ chunks: ["Fine, ", "thanks."], usage: { input: 300, output: 12, cached: 100 } }));
    const client = await served.connect();
    client.send({ type: "chat", text: "How are you?" });
    const sessionId = (await client.next("session")).session_id;
    await client.next("turn_done");
    expect(replyFrames(client).update?.metadata.usage).toEqual({
      inputTokens: 300,
      outputTokens: 12,
      cachedInputTokens: 100,
    });
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: sessionId }, "session_detail"),
      "session_detail",
    );
    expect(detail.usage.turns).toMatchObject([
      { label: "chat: How are you?", calls: 1, inputTokens: 300, cachedInputTokens: 100, outputTokens: 12 },
    ]);
    expect(detail.usage.total).toMatchObject({ calls: 1, inputTokens: 300, outputTokens: 12 });
  });
});
