import { agenticFunction } from "@openprogram/session-context";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asFrame, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

const summarize = agenticFunction(
  { name: "summarize", doc: "Summarize the text in one sentence." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);

describe("get_calls: what the model saw", () => {
  it("answers with each model request rendered again from the record, checked against what was sent", async () => {
    const { runtime, provider } = scriptedRuntime(["A sentence."]);
    const served = await startDispatcher({ runtime, programs: { summarize } });
    const client = await served.connect();
    client.send({ type: "run", program: "summarize", input: { text: "the tide" } });
    const done = await client.next("turn_done");
    const calls = asFrame(await client.request({ type: "get_calls", session_id: done.session_id }, "calls"), "calls");
    expect(calls.calls).toEqual([
      expect.objectContaining({
        caller_name: "summarize",
        system: "Summarize the text in one sentence.",
        messages: provider.requests[0]?.request.messages,
        reply: "A sentence.",
        verified: true,
      }),
    ]);
  });

  it("refuses an unknown session with session_not_found", async () => {
    const served = await startDispatcher({ runtime: null });
    const client = await served.connect();
    client.send({ type: "get_calls", session_id: "no_such_session" });
    expect(await client.next("error")).toMatchObject({ code: "session_not_found", action: "get_calls" });
  });
});
