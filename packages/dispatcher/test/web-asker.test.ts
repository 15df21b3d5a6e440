import { agenticFunction, askUser } from "@openprogram/session-context";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asError, asFrame, closeAll, startDispatcher } from "./helpers.js";

const pickColor = agenticFunction({ name: "pick_color", doc: "Ask the user for a color and report it." }, async () => {
  const color = await askUser("Which color?", { choices: ["red", "blue"] });
  return `picked ${color}`;
});
const askName = agenticFunction({ name: "ask_name", doc: "Ask for a name." }, async () => askUser("Your name?"));

afterEach(closeAll);

async function start() {
  return startDispatcher({
    runtime: scriptedRuntime([]).runtime,
    programs: { pick_color: pickColor, ask_name: askName },
  });
}

describe("ask_user over the web", () => {
  it("round-trips: question frame, needs_input, answer, question_closed, turn_done; recorded on disk", async () => {
    const served = await start();
    const client = await served.connect();
    client.send({ type: "run", program: "pick_color" });
    const question = await client.next("question");
    expect(question).toMatchObject({ question: "Which color?", choices: ["red", "blue"], timeout_ms: null });
    await client.next("status", (frame) => frame.status === "needs_input");
    client.send({ type: "answer", question_id: question.question_id, value: "2" });
    const closed = await client.next("question_closed");
    expect(closed).toMatchObject({ question_id: question.question_id, outcome: "answered" });
    const done = await client.next("turn_done");
    expect(done.result).toBe("picked blue");
    const nodes = await served.store.db.loadNodes(question.session_id);
    const asked = nodes.find((node) => node.name === "ask_user");
    expect(asked).toMatchObject({
      id: question.question_id,
      input: "Which color?",
      output: "blue",
      caller: nodes[0]?.id,
      metadata: { status: "answered" },
    });
    // The question frame is sent once, by the asker (not also from the core's question event).
    expect(client.frames.filter((frame) => frame.type === "question")).toHaveLength(1);
  });

  it("keeps the question when the asking client disconnects; a client that subscribes later gets it and answers", async () => {
    const served = await start();
    const asking = await served.connect();
    asking.send({ type: "run", program: "ask_name" });
    const question = await asking.next("question");
    asking.close();
    await asking.waitClosed();

    const later = await served.connect();
    const subscribed = asFrame(
      await later.request({ type: "subscribe", session_id: question.session_id }, "subscribed"),
      "subscribed",
    );
    expect(subscribed).toEqual({
      type: "subscribed",
      session_id: question.session_id,
      status: "needs_input",
      busy: true,
    });
    const again = await later.next("question");
    expect(again).toEqual(question);
    later.send({ type: "answer", question_id: question.question_id, value: "Grace" });
    const done = await later.next("turn_done");
    expect(done).toMatchObject({ session_id: question.session_id, result: "Grace" });
    expect((await served.store.db.getSession(question.session_id))?.status).toBe("idle");
  });

  it("refuses an answer outside the choices and keeps the question waiting", async () => {
    const served = await start();
    const client = await served.connect();
    client.send({ type: "run", program: "pick_color" });
    const question = await client.next("question");
    const refused = asError(
      await client.request({ type: "answer", question_id: question.question_id, value: "green" }, "turn_done"),
    );
    expect(refused).toMatchObject({ code: "invalid_answer", action: "answer" });
    expect(refused.message).toContain("red, blue");
    // A huge wrong answer is echoed clipped, never whole.
    const huge = "g".repeat(900_000);
    const clipped = asError(
      await client.request({ type: "answer", question_id: question.question_id, value: huge }, "turn_done"),
    );
    expect(clipped.code).toBe("invalid_answer");
    expect(clipped.message).toContain(`${"g".repeat(200)}… (900000 characters)`);
    expect(clipped.message.length).toBeLessThan(500);
    client.send({ type: "answer", question_id: question.question_id, value: "red" });
    expect((await client.next("turn_done")).result).toBe("picked red");
  });

  it("decline fails the turn with user_declined, recorded as declined", async () => {
    const served = await start();
    const client = await served.connect();
    client.send({ type: "run", program: "ask_name" });
    const question = await client.next("question");
    client.send({ type: "decline", question_id: question.question_id, reason: "private" });
    const failed = await client.next("turn_failed");
    expect(failed.error.code).toBe("user_declined");
    const nodes = await served.store.db.loadNodes(question.session_id);
    expect(nodes.find((node) => node.name === "ask_user")?.metadata).toMatchObject({
      status: "declined",
      reason: "private",
    });
  });

  it("answers for a question that is not waiting get unknown_question", async () => {
    const served = await start();
    const client = await served.connect();
    const answer = await client.refused({
      type: "answer",
      question_id: "0123456789ab",
      value: "x",
      client_msg_id: "a1",
    });
    expect(answer).toMatchObject({ code: "unknown_question", ref: "a1" });
    const decline = await client.refused({ type: "decline", question_id: "0123456789ab" });
    expect(decline.code).toBe("unknown_question");
  });

  it("stop while a question waits cancels it: question_closed cancelled, turn_failed cancelled", async () => {
    const served = await start();
    const client = await served.connect();
    client.send({ type: "run", program: "ask_name" });
    const question = await client.next("question");
    client.send({ type: "stop", session_id: question.session_id });
    expect(await client.next("question_closed")).toMatchObject({ outcome: "cancelled" });
    expect((await client.next("turn_failed")).error.code).toBe("cancelled");
    const late = await client.refused({ type: "answer", question_id: question.question_id, value: "x" });
    expect(late.code).toBe("unknown_question");
  });
});
