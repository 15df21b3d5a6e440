// Tool calls through the dispatcher (issue 32): tool_call and tool_result
// frames, an approval asked as a question and answered with an answer frame,
// and a run frame's approve_tools. A real WebSocket client against a real
// model server speaking the chat-completions protocol.
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { createTempStore, startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closeAll, onCleanup, startDispatcher } from "./helpers.js";
import { planDay, toolModel } from "./tool-program.js";

let model: FakeOpenAIServer;
let runtime: Runtime;
beforeEach(async () => {
  model = await startFakeOpenAIServer(toolModel);
  onCleanup(() => model.close());
  runtime = createRuntime({ provider: "openai", baseUrl: model.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
});
afterEach(() => closeAll());

describe("tool calls on the WebSocket", () => {
  it("sends tool_call and tool_result frames; the approval is a question answered with yes", async () => {
    const served = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    const client = await served.connect();
    client.send({ type: "run", program: "plan_day", input: {} });
    const sessionId = (await client.next("session")).session_id;
    const question = await client.next("question");
    expect(question).toMatchObject({
      session_id: sessionId,
      question: 'Allow the tool book_table to run with {"place":"Fjord"}?',
      choices: ["yes", "no"],
    });
    client.send({ type: "answer", question_id: question.question_id, value: "yes" });
    const done = await client.next("turn_done");
    expect(done.result).toBe('Done: {"city": "Oslo", "sky": "snow"} | booked Fjord');
    const calls = [await client.next("tool_call"), await client.next("tool_call")];
    expect(calls.map((frame) => [frame.name, frame.arguments, frame.tool_call_id])).toEqual([
      ["weather", { city: "Oslo" }, "call_1"],
      ["book_table", { place: "Fjord" }, "call_2"],
    ]);
    for (const call of calls) {
      const result = await client.next("tool_result", (frame) => frame.node_id === call.node_id);
      expect(result).toMatchObject({ session_id: sessionId, name: call.name, ok: true });
      expect(result.duration_seconds).toBeGreaterThanOrEqual(0);
    }
  });

  it("answered no, the call's result is the refusal and the turn goes on", async () => {
    const served = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    const client = await served.connect();
    client.send({ type: "run", program: "plan_day", input: {} });
    const question = await client.next("question");
    client.send({ type: "answer", question_id: question.question_id, value: "no" });
    const refused = await client.next("tool_result", (frame) => frame.name === "book_table");
    expect(refused.ok).toBe(false);
    expect(refused.error).toContain("did not allow book_table");
    expect((await client.next("turn_done")).result).toContain("The user did not allow book_table");
  });

  it("approve_tools on the run frame approves every call of that turn only", async () => {
    const served = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    const client = await served.connect();
    client.send({ type: "run", program: "plan_day", input: {}, approve_tools: true });
    const sessionId = (await client.next("session")).session_id;
    expect((await client.next("turn_done")).result).toBe('Done: {"city": "Oslo", "sky": "snow"} | booked Fjord');
    expect(client.frames.some((frame) => frame.type === "question")).toBe(false);
    // The next turn of the same session asks again.
    client.send({ type: "run", session_id: sessionId, program: "plan_day", input: {} });
    expect((await client.next("question")).question).toContain("book_table");
    expect((await client.refused({ type: "run", program: "plan_day", approve_tools: "yes" })).message).toMatch(
      /run\.approve_tools must be true or false/,
    );
  });

  it("an approval outlives a restart: answered yes after it, the turn resumes here and runs the tool", async () => {
    // Both dispatchers' cleanups remove it (removing twice is harmless).
    const store = createTempStore("openprogram-dispatcher-tool-restart-");
    const first = await startDispatcher({ runtime, programs: { plan_day: planDay }, store });
    const asking = await first.connect();
    asking.send({ type: "run", program: "plan_day", input: {} });
    const sessionId = (await asking.next("session")).session_id;
    const question = await asking.next("question");
    await first.dispatcher.close();
    expect((await asking.next("turn_failed")).error.code).toBe("cancelled");
    const requestsBefore = model.requests.length;

    const second = await startDispatcher({ runtime, programs: { plan_day: planDay }, store });
    const client = await second.connect();
    client.send({ type: "subscribe", session_id: sessionId });
    expect((await client.next("question")).question_id).toBe(question.question_id);
    client.send({ type: "answer", session_id: sessionId, question_id: question.question_id, value: "yes" });
    expect((await client.next("turn_done")).result).toBe('Done: {"city": "Oslo", "sky": "snow"} | booked Fjord');
    // The reply that asked for the tools came from the record: one model request after the restart.
    expect(model.requests.length - requestsBefore).toBe(1);
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.filter((node) => node.name === "book_table").map((node) => node.output)).toEqual(["booked Fjord"]);
  });
});
