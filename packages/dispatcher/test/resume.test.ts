// Durable turns in the dispatcher (issue 14): the `resume` frame, and a
// question that outlives the dispatcher that asked it, answered after a
// restart. Real dispatchers over loopback WebSocket, a real HTTP server
// speaking the chat-completions protocol, the real store.
import { agenticFunction, askUser, sessionContext, type Asker, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asError, asFrame, closeAll, startDispatcher, type TestClient } from "./helpers.js";

const planTrip = agenticFunction(
  { name: "plan_trip", doc: "Plan a trip: a destination, a question, a plan." },
  async ({ region }: { region: string }, { runtime }) => {
    const destination = await runtime.exec(`Suggest a destination in ${region}.`);
    const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort"] });
    const plan = await runtime.exec(`Plan a ${style} trip to ${destination}.`);
    return { destination, style, plan };
  },
);

const INPUT = { region: "Portugal" };

let store: TempStore;
let server: FakeOpenAIServer;
let runtime: Runtime;
/** Request indexes (0-based) the model server fails with HTTP 500. */
let failing: Set<number>;

beforeEach(async () => {
  store = createTempStore("openprogram-dispatcher-resume-");
  failing = new Set();
  server = await startFakeOpenAIServer((request, index) => {
    if (failing.has(index)) return { status: 500, message: `request ${index} fails` };
    const last = request.json.messages?.at(-1)?.content ?? "";
    return last.startsWith("Suggest") ? "Lisbon" : `a plan for: ${last}`;
  });
  runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
});
afterEach(async () => {
  await closeAll();
  await server.close();
  store.cleanup();
});

function bodies(): string[] {
  return server.requests.map((request) => request.body);
}

function start(): ReturnType<typeof startDispatcher> {
  return startDispatcher({ runtime, programs: { plan_trip: planTrip }, store });
}

/** Runs plan_trip until it asks; returns the session and the question. */
async function runUntilQuestion(
  client: TestClient,
): Promise<{ sessionId: string; turnId: string; questionId: string }> {
  client.send({ type: "run", program: "plan_trip", input: INPUT, client_msg_id: "r1" });
  const session = asFrame(await client.next(["session", "error"]), "session");
  const question = await client.next("question");
  expect(question.question).toBe("Which style of trip to Lisbon?");
  return { sessionId: session.session_id, turnId: session.turn_id, questionId: question.question_id };
}

describe("a question outlives the dispatcher that asked it", () => {
  it("close() suspends the turn; after a restart a subscriber is shown the question and its answer resumes the turn here", async () => {
    const first = await start();
    const asking = await first.connect();
    const { sessionId, turnId, questionId } = await runUntilQuestion(asking);

    await first.dispatcher.close();
    const stopped = await asking.next("turn_failed");
    expect(stopped).toMatchObject({ session_id: sessionId, turn_id: turnId, error: { code: "cancelled" } });
    expect(stopped.error.message).toContain("shutting down");
    const question = (await store.db.loadNodes(sessionId)).find((node) => node.name === "ask_user");
    expect(question).toMatchObject({ id: questionId, metadata: { status: "waiting" } });
    expect((await store.db.getSession(sessionId))?.status).toBe("needs_input");
    expect(first.logs.find((entry) => entry.event === "turns_suspended")).toMatchObject({ count: 1 });

    const second = await start();
    const client = await second.connect();
    const subscribed = asFrame(
      await client.request({ type: "subscribe", session_id: sessionId }, "subscribed"),
      "subscribed",
    );
    expect(subscribed).toMatchObject({ status: "needs_input", busy: false });
    expect(await client.next("question")).toEqual({
      type: "question",
      session_id: sessionId,
      question_id: questionId,
      question: "Which style of trip to Lisbon?",
      choices: ["budget", "comfort"],
      timeout_ms: null,
    });
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: sessionId }, "session_detail"),
      "session_detail",
    );
    expect(detail.resumable).toEqual({
      turn_id: turnId,
      name: "plan_trip",
      status: "cancelled",
      question_id: questionId,
      // Waiting for its answer, a cancelled turn can go on: the first suggestion comes from the record.
      resume_helps: true,
      finished_calls: 1,
      error: { code: "cancelled", name: expect.any(String) as unknown, message: expect.any(String) as unknown },
    });

    // Without its session the answer cannot find a question no turn here waits for; nothing changes.
    const lost = asError(await client.request({ type: "answer", question_id: questionId, value: "2" }, "session"));
    expect(lost.code).toBe("unknown_question");
    expect(lost.message).toContain("session_id");
    const wrong = asError(
      await client.request(
        { type: "answer", session_id: sessionId, question_id: questionId, value: "luxury" },
        "session",
      ),
    );
    expect(wrong.code).toBe("invalid_answer");

    client.send({ type: "answer", session_id: sessionId, question_id: questionId, value: "2", client_msg_id: "a1" });
    const resumed = await client.next("session");
    expect(resumed).toMatchObject({
      session_id: sessionId,
      kind: "resume",
      resumed_turn_id: turnId,
      client_msg_id: "a1",
    });
    expect(await client.next("question_closed")).toMatchObject({ question_id: questionId, outcome: "answered" });
    const done = await client.next("turn_done");
    expect(done).toMatchObject({ turn_id: resumed.turn_id, client_msg_id: "a1" });
    expect(done.result).toEqual({
      destination: "Lisbon",
      style: "comfort",
      plan: "a plan for: Plan a comfort trip to Lisbon.",
    });

    // Each request once: the first model call was replayed from the record, not sent again.
    expect(bodies()).toHaveLength(2);
    expect(new Set(bodies()).size).toBe(2);
    const nodes = await store.db.loadNodes(sessionId);
    expect(
      nodes.filter((node) => node.name === "ask_user").map((node) => [node.id, node.metadata.status, node.output]),
    ).toEqual([[questionId, "answered", "comfort"]]);
    const tops = nodes.filter((node) => node.name === "plan_trip");
    expect(tops.map((node) => node.metadata.status)).toEqual(["cancelled", "completed"]);
    expect(tops[1]?.metadata.resumes).toMatchObject({ node_id: tops[0]?.id });
    expect((await store.db.getSession(sessionId))?.status).toBe("idle");

    // Answered once: a second answer finds no question waiting, and nothing runs again.
    const again = asError(
      await client.request({ type: "answer", session_id: sessionId, question_id: questionId, value: "1" }, "session"),
    );
    expect(again.code).toBe("no_pending_question");
    const after = asFrame(
      await client.request({ type: "get_session", session_id: sessionId }, "session_detail"),
      "session_detail",
    );
    expect(after.resumable).toBeNull();
    expect(bodies()).toHaveLength(2);
  });

  it("an answer while the asking process still waits goes to that process: no second replay", async () => {
    const served = await start();
    const client = await served.connect();
    // Another entry (a CLI run, say) waits for this question, with an asker nobody answers.
    const silent: Asker = {
      ask: (_request, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(new Error("stopped")), { once: true }),
        ),
    };
    const elsewhere = sessionContext(
      {
        sessionId: "asked_elsewhere",
        db: store.db,
        runtime,
        asker: silent,
        program: { ref: "program:plan_trip", input: INPUT },
      },
      () => planTrip(INPUT),
    );
    let questionId = "";
    for (let tries = 0; tries < 3000 && questionId === ""; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      if ((await store.db.getSession("asked_elsewhere")) === null) continue;
      questionId = (await store.db.loadNodes("asked_elsewhere")).find((node) => node.name === "ask_user")?.id ?? "";
    }
    expect(questionId).not.toBe("");

    asFrame(await client.request({ type: "subscribe", session_id: "asked_elsewhere" }, "subscribed"), "subscribed");
    expect(await client.next("question")).toMatchObject({ question_id: questionId });
    // A resume is refused while that process runs the turn.
    const busy = asError(await client.request({ type: "resume", session_id: "asked_elsewhere" }, "session"));
    expect(busy.code).toBe("session_busy");
    client.send({ type: "answer", session_id: "asked_elsewhere", question_id: questionId, value: "budget" });
    expect(await client.next("question_closed")).toMatchObject({ question_id: questionId, outcome: "answered" });
    await expect(elsewhere).resolves.toMatchObject({ style: "budget" });
    expect(bodies()).toHaveLength(2);
    expect(client.frames.some((frame) => frame.type === "session")).toBe(false);
    expect(served.logs.find((entry) => entry.event === "answer_delivered")).toMatchObject({
      session_id: "asked_elsewhere",
    });
  });
});

describe("the resume frame", () => {
  it("continues a failed run by replay; refuses nothing to resume, an unknown turn or session, and a bad frame", async () => {
    failing.add(1);
    const served = await start();
    const client = await served.connect();
    client.send({ type: "run", program: "plan_trip", input: INPUT });
    const session = asFrame(await client.next(["session", "error"]), "session");
    const question = await client.next("question");
    client.send({ type: "answer", question_id: question.question_id, value: "budget" });
    const failed = await client.next("turn_failed");
    expect(failed.error.code).toBe("provider_error");
    const sessionId = session.session_id;
    const top = (await store.db.loadNodes(sessionId)).find((node) => node.name === "plan_trip");
    expect(top?.metadata.resumable).toMatchObject({ program: "program:plan_trip", input: INPUT });

    const unknownTurn = asError(
      await client.request(
        { type: "resume", session_id: sessionId, turn_id: "turn_0000000000", client_msg_id: "u" },
        "session",
      ),
    );
    expect(unknownTurn).toMatchObject({ code: "turn_not_found", ref: "u", action: "resume" });
    expect(unknownTurn.message).toContain(session.turn_id);
    const noSession = asError(await client.request({ type: "resume", session_id: "no_such_session" }, "session"));
    expect(noSession.code).toBe("session_not_found");
    const noId = asError(await client.request({ type: "resume" }, "session"));
    expect(noId).toMatchObject({ code: "invalid_input", action: "resume" });
    expect(noId.message).toContain("resume.session_id");

    client.send({ type: "resume", session_id: sessionId, client_msg_id: "c1" });
    const resumed = asFrame(await client.next(["session", "error"]), "session");
    expect(resumed).toMatchObject({ kind: "resume", resumed_turn_id: session.turn_id, client_msg_id: "c1" });
    const done = await client.next("turn_done");
    expect(done.result).toMatchObject({ destination: "Lisbon", style: "budget" });
    // Request 0 was replayed; the failed request 1 was sent again, once.
    expect(bodies()).toHaveLength(3);
    expect(bodies()[2]).toBe(bodies()[1]);
    expect(bodies()[0]).not.toBe(bodies()[1]);

    const nothing = asError(await client.request({ type: "resume", session_id: sessionId }, "session"));
    expect(nothing.code).toBe("nothing_to_resume");
    const noQuestion = asError(
      await client.request(
        { type: "answer", session_id: sessionId, question_id: question.question_id, value: "budget" },
        "session",
      ),
    );
    expect(noQuestion.code).toBe("no_pending_question");
    expect(bodies()).toHaveLength(3);

    // A session of chat turns only has no question to answer, nor a turn to resume; an unknown one is named.
    client.send({ type: "chat", text: "Hello" });
    const chat = asFrame(await client.next(["session", "error"]), "session");
    await client.next("turn_done", (frame) => frame.session_id === chat.session_id);
    const chatAnswer = asError(
      await client.request(
        { type: "answer", session_id: chat.session_id, question_id: "0123456789ab", value: "x" },
        "session",
      ),
    );
    expect(chatAnswer.code).toBe("no_pending_question");
    const chatResume = asError(await client.request({ type: "resume", session_id: chat.session_id }, "session"));
    expect(chatResume.code).toBe("nothing_to_resume");
    const unknownSession = asError(
      await client.request(
        { type: "answer", session_id: "no_such_session", question_id: "0123456789ab", value: "x" },
        "session",
      ),
    );
    expect(unknownSession.code).toBe("session_not_found");
  });

  it("two resumes of one turn at once: one wins, the other gets session_busy", async () => {
    failing.add(0);
    const served = await start();
    const first = await served.connect();
    const second = await served.connect();
    first.send({ type: "run", program: "plan_trip", input: INPUT });
    const session = asFrame(await first.next(["session", "error"]), "session");
    expect((await first.next("turn_failed")).error.code).toBe("provider_error");
    // The winner waits at its question, so the loser's resume arrives while it runs.
    first.send({ type: "resume", session_id: session.session_id, client_msg_id: "one" });
    second.send({ type: "resume", session_id: session.session_id, client_msg_id: "two" });
    const outcomes = await Promise.all([first.next(["session", "error"]), second.next(["session", "error"])]);
    expect(outcomes.map((frame) => frame.type).sort()).toEqual(["error", "session"]);
    const refused = outcomes.find((frame) => frame.type === "error");
    expect(refused).toMatchObject({ code: "session_busy", action: "resume" });
    const winner = outcomes[0]?.type === "session" ? first : second;
    const question = await winner.next("question");
    winner.send({ type: "answer", question_id: question.question_id, value: "comfort" });
    expect((await winner.next("turn_done")).result).toMatchObject({ style: "comfort" });
    const tops = (await store.db.loadNodes(session.session_id)).filter((node) => node.name === "plan_trip");
    expect(tops.map((node) => node.metadata.status)).toEqual(["failed", "completed"]);
    expect(bodies()).toHaveLength(3);
  });

  it("resumes a turn another entry started, through programRefs; refuses a program it does not register", async () => {
    const ref = "module:/srv/programs/trip.mjs#planTrip";
    failing.add(1);
    const noAnswer: Asker = { ask: async () => ({ kind: "answer", value: "budget" }) };
    await expect(
      sessionContext(
        { sessionId: "from_cli", db: store.db, runtime, asker: noAnswer, program: { ref, input: INPUT } },
        () => planTrip(INPUT),
      ),
    ).rejects.toMatchObject({ code: "provider_error" });

    const plain = await start();
    const client = await plain.connect();
    const refused = asError(await client.request({ type: "resume", session_id: "from_cli" }, "session"));
    expect(refused.code).toBe("turn_not_resumable");
    expect(refused.message).toContain(ref);
    expect(refused.message).toContain("plan_trip");
    await plain.dispatcher.close();

    const mapped = await startDispatcher({
      runtime,
      programs: { plan_trip: planTrip },
      programRefs: { plan_trip: ref },
      store,
    });
    const other = await mapped.connect();
    other.send({ type: "resume", session_id: "from_cli" });
    asFrame(await other.next(["session", "error"]), "session");
    expect((await other.next("turn_done")).result).toMatchObject({ style: "budget" });
    expect(bodies()).toHaveLength(3);
    await expect(
      startDispatcher({ programs: { plan_trip: planTrip }, programRefs: { other: ref }, store }),
    ).rejects.toThrow(/programRefs\.other names no registered program/);
  });
});
