import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asError, closeAll, startDispatcher, type Frame, type TestDispatcher } from "./helpers.js";

let fake: FakeOpenAIServer;
let served: TestDispatcher;

beforeEach(async () => {
  // Replies depend on the content only, so runs are reproducible.
  fake = await startFakeOpenAIServer((request) => `you said: ${request.json.messages?.at(-1)?.content ?? ""}`);
  const runtime = createRuntime({
    provider: "openai",
    baseUrl: fake.baseUrl,
    model: "fake-model",
    maxRetries: 0,
  }) as Runtime;
  served = await startDispatcher({ runtime });
});

afterEach(async () => {
  await closeAll();
  await fake.close();
});

/** A compact trace of a turn's frames: "session", "status:running", "node:append:user", ...; a run of deltas is one "delta". */
function trace(frames: Frame[]): string[] {
  return frames
    .filter(
      (frame, index) => frame.type !== "hello" && !(frame.type === "delta" && frames[index - 1]?.type === "delta"),
    )
    .map((frame) =>
      frame.type === "node"
        ? `node:${frame.op}:${frame.node.role}`
        : frame.type === "status"
          ? `status:${frame.status}`
          : frame.type,
    );
}

describe("chat turns", () => {
  it("creates a session whose id is announced first, continues it with the id, and the model sees the history", async () => {
    const client = await served.connect();
    client.send({ type: "chat", text: "My name is Ada.", client_msg_id: "m1" });
    const session = await client.next("session");
    expect(trace(client.frames)[0]).toBe("session");
    expect(session.session_id).toMatch(/^session_[0-9a-f]{10}$/);
    expect(session).toMatchObject({ created: true, kind: "chat", client_msg_id: "m1" });
    const sessionId = session.session_id;
    const done = await client.next("turn_done");
    expect(done).toEqual({
      type: "turn_done",
      session_id: sessionId,
      turn_id: session.turn_id,
      result: "you said: My name is Ada.",
      client_msg_id: "m1",
    });

    client.send({ type: "chat", session_id: sessionId, text: "What is my name?" });
    const second = await client.next("session");
    expect(second).toMatchObject({ session_id: sessionId, created: false });
    expect(second.turn_id).not.toBe(session.turn_id);
    await client.next("turn_done", (frame) => frame.turn_id === second.turn_id);

    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.json.messages).toEqual([
      { role: "user", content: "My name is Ada." },
      { role: "assistant", content: "you said: My name is Ada." },
      { role: "user", content: "What is my name?" },
    ]);

    const nodes = await served.store.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.role, node.output])).toEqual([
      ["user", "My name is Ada."],
      ["llm", "you said: My name is Ada."],
      ["user", "What is my name?"],
      ["llm", "you said: What is my name?"],
    ]);
    expect(await served.store.db.getSession(sessionId)).toMatchObject({ status: "idle", source: "web" });
    // One commit per turn, after "session init".
    expect((await served.store.db.gitLog(sessionId)).map((entry) => entry.message)).toEqual([
      `turn ${second.turn_id} (web)`,
      `turn ${session.turn_id} (web)`,
      "session init",
    ]);
  });

  it("streams the turn: running status, the user node, the llm node running then completed, idle, then turn_done", async () => {
    const client = await served.connect();
    client.send({ type: "chat", text: "hello" });
    const done = await client.next("turn_done");
    expect(trace(client.frames)).toEqual([
      "session",
      "status:running",
      "node:append:user",
      "node:append:llm",
      "delta",
      "node:update:llm",
      "status:idle",
      "turn_done",
    ]);
    const llm = await client.next("node", (frame) => frame.node.role === "llm" && frame.op === "update");
    // Nodes travel exactly as stored (snake_case fields).
    expect(llm.node).toMatchObject({
      name: "fake-model",
      caller: "",
      output: "you said: hello",
      metadata: { status: "completed" },
    });
    expect(llm.node.metadata.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(llm.session_id).toBe(done.session_id);
    const stored = await served.store.db.loadNodes(done.session_id);
    expect(stored[1]).toEqual(llm.node);
  });

  it("reports a provider failure as turn_failed with the core's code, and the session is marked failed", async () => {
    fake.setHandler(() => ({ status: 500, message: "model overloaded" }));
    const client = await served.connect();
    client.send({ type: "chat", text: "hello" });
    const failed = await client.next("turn_failed");
    expect(failed.error.code).toBe("provider_error");
    expect(failed.error.message).toContain("model overloaded");
    expect((await served.store.db.getSession(failed.session_id))?.status).toBe("failed");
  });

  it("says a retried request to the session's clients as a retry frame, then finishes the turn", async () => {
    const retrying = await startDispatcher({
      runtime: createRuntime({
        provider: "openai",
        baseUrl: fake.baseUrl,
        model: "fake-model",
        maxRetries: 1,
      }) as Runtime,
    });
    fake.setHandler((_request, index) =>
      index === 0 ? { status: 429, message: "slow down", type: "rate_limit_error", retryAfter: "0" } : "hi again",
    );
    const client = await retrying.connect();
    client.send({ type: "chat", text: "hello" });
    const retry = await client.next("retry");
    expect(retry).toMatchObject({ type: "retry", attempt: 2, delay_ms: 0 });
    expect(retry.reason).toContain("slow down");
    const done = await client.next("turn_done");
    const llm = (await retrying.store.db.loadNodes(done.session_id)).find((node) => node.role === "llm");
    expect(llm?.id).toBe(retry.node_id);
    expect(llm?.output).toBe("hi again");
  });

  it("refuses a chat when the dispatcher runs without a model, before creating any session", async () => {
    const bare = await startDispatcher({ runtime: null });
    const client = await bare.connect();
    const answer = asError(await client.request({ type: "chat", text: "hello", client_msg_id: "x1" }, "session"));
    expect(answer).toMatchObject({ code: "runtime_missing", ref: "x1", action: "chat" });
    expect(answer.message).toContain("OPENPROGRAM_PROVIDER");
    expect(await bare.store.db.listSessions()).toEqual([]);
  });
});
