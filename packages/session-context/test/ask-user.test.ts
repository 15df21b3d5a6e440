import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  AskTimeoutError,
  AskUserUnavailableError,
  askUser,
  CancelledError,
  InvalidAnswerError,
  sessionContext,
  UserDeclinedError,
  type Asker,
  type SessionEvent,
} from "../src/index.js";
import { createScriptedAsker, createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

const choose = agenticFunction(
  { name: "choose", doc: "Ask which idea to pursue." },
  async ({ options }: { options: { timeoutMs?: number; default?: string } }) =>
    askUser("Which idea?", { choices: ["A", "B"], ...options }),
);

/** Runs `choose` in a fresh session and returns the outcome plus the recorded nodes. */
async function run(asker: Asker | null, options: { timeoutMs?: number; default?: string } = {}, signal?: AbortSignal) {
  const events: SessionEvent[] = [];
  let sessionId = "";
  let result: unknown;
  let error: unknown;
  try {
    result = await sessionContext(
      { db: store.db, runtime: scriptedRuntime([]).runtime, asker, signal, onEvent: (event) => events.push(event) },
      async (session) => {
        sessionId = session.sessionId;
        return choose({ options });
      },
    );
  } catch (caught) {
    error = caught;
  }
  const nodes = await store.db.loadNodes(sessionId);
  const question = nodes.find((node) => node.name === "ask_user");
  return { result, error, nodes, question, events, sessionId };
}

describe("askUser", () => {
  it("records the question under the current call, waits as needs_input, and records the answer", async () => {
    let statusWhileWaiting: string | undefined;
    const asker: Asker = {
      async ask(request) {
        statusWhileWaiting = (await store.db.getSession(request.sessionId))?.status;
        expect(request.choices).toEqual(["A", "B"]);
        return { kind: "answer", value: "2" };
      },
    };
    const { result, question, nodes, events, sessionId } = await run(asker);
    expect(result).toBe("B");
    expect(statusWhileWaiting).toBe("needs_input");
    expect(question).toMatchObject({
      role: "user",
      name: "ask_user",
      input: "Which idea?",
      output: "B",
      caller: nodes[0]?.id,
      predecessor: null,
    });
    expect(question?.metadata).toMatchObject({ status: "answered", choices: ["A", "B"], kind: "ask_user" });
    expect(
      events.filter((event) => event.type === "status").map((event) => (event as { status: string }).status),
    ).toEqual(["running", "needs_input", "running", "idle"]);
    const questionEvent = events.find((event) => event.type === "question");
    expect(questionEvent).toMatchObject({ questionId: question?.id, question: "Which idea?", choices: ["A", "B"] });
    expect(events.find((event) => event.type === "question_closed")).toMatchObject({
      questionId: question?.id,
      outcome: "answered",
    });
    expect((await store.db.getSession(sessionId))?.status).toBe("idle");
  });

  it("answers from a scripted asker and records each question once", async () => {
    const asker = createScriptedAsker(["A"]);
    const { result, nodes } = await run(asker);
    expect(result).toBe("A");
    expect(asker.questions.map((question) => question.question)).toEqual(["Which idea?"]);
    expect(nodes.filter((node) => node.name === "ask_user")).toHaveLength(1);
  });

  it("declined: records declined and raises UserDeclinedError", async () => {
    const { error, question, nodes } = await run(createScriptedAsker([{ decline: true }]));
    expect(error).toBeInstanceOf(UserDeclinedError);
    expect((error as UserDeclinedError).code).toBe("user_declined");
    expect(question?.metadata.status).toBe("declined");
    expect(nodes[0]?.metadata.status).toBe("failed");
  });

  it("timed out without a default: records timed_out and raises AskTimeoutError; the asker's signal aborts", async () => {
    let askerSignal: AbortSignal | undefined;
    const slow: Asker = {
      ask: (_, { signal }) => {
        askerSignal = signal;
        return new Promise(() => undefined);
      },
    };
    const { error, question } = await run(slow, { timeoutMs: 30 });
    expect(error).toBeInstanceOf(AskTimeoutError);
    expect((error as AskTimeoutError).code).toBe("ask_timeout");
    expect(question?.metadata).toMatchObject({ status: "timed_out", used_default: false });
    expect(askerSignal?.aborted).toBe(true);
  });

  it("timed out with a default: returns and records the default", async () => {
    const slow: Asker = { ask: () => new Promise(() => undefined) };
    const { result, question } = await run(slow, { timeoutMs: 30, default: "A" });
    expect(result).toBe("A");
    expect(question).toMatchObject({ output: "A", metadata: { status: "timed_out", used_default: true } });
  });

  it("cancelled through the signal: records cancelled and raises CancelledError", async () => {
    const controller = new AbortController();
    const slow: Asker = {
      ask: () => {
        setTimeout(() => controller.abort(new Error("user pressed stop")), 20);
        return new Promise(() => undefined);
      },
    };
    const { error, question, nodes, sessionId } = await run(slow, {}, controller.signal);
    expect(error).toBeInstanceOf(CancelledError);
    expect(question?.metadata.status).toBe("cancelled");
    expect(nodes[0]?.metadata.status).toBe("cancelled");
    expect((await store.db.getSession(sessionId))?.status).toBe("idle");
  });

  it("no asker: raises AskUserUnavailableError; a new session it refused is removed, a continued one records it", async () => {
    let sessionId = "";
    const error = await sessionContext({ db: store.db, asker: null }, (session) => {
      sessionId = session.sessionId;
      return choose({ options: {} });
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AskUserUnavailableError);
    expect((error as Error).message).toContain("--answers");
    expect(await store.db.getSession(sessionId)).toBeNull();

    await sessionContext({ db: store.db, sessionId: "continued" }, async () => "an earlier turn");
    const failed = await sessionContext({ db: store.db, sessionId: "continued", asker: null }, () =>
      choose({ options: {} }),
    ).catch((caught: unknown) => caught);
    expect(failed).toBeInstanceOf(AskUserUnavailableError);
    const question = (await store.db.loadNodes("continued")).find((node) => node.name === "ask_user");
    expect(question?.metadata).toMatchObject({ status: "failed", error: { code: "ask_user_unavailable" } });
  });

  it("an answer outside the choices is an InvalidAnswerError, recorded", async () => {
    const { error, question } = await run(createScriptedAsker(["C"]));
    expect(error).toBeInstanceOf(InvalidAnswerError);
    expect(question?.metadata).toMatchObject({ status: "failed", error: { code: "invalid_answer" } });
  });
});
