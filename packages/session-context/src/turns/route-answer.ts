import { activeContext } from "../context/storage.js";
import { NoPendingQuestionError, NothingToResumeError, SessionNotFoundError } from "../errors.js";
import { assertValidSessionId } from "../ids.js";
import { openStore } from "../store/open-store.js";
import { storeInternals } from "../store/internal.js";
import { answerQuestion, checkAnswer, turnWaitingFor, type AnsweredQuestion } from "./answer-question.js";
import type { ResumableTurn } from "./find-resumable.js";
import { prepareResume, type PreparedResume, type ResumeTurnOptions } from "./resume-turn.js";

/** Options of `routeAnswer`: the answer's, and how to find the program should the turn resume. */
export type RouteAnswerOptions = Pick<ResumeTurnOptions, "sessionId" | "questionId" | "db" | "resolveProgram"> & {
  /** The answer (with choices: one of them, or its 1-based number). */
  value: string;
};

/** Where an answer went. */
export type AnswerRoute =
  /** A live process waits for the question: the answer is recorded, and that process continues the turn. */
  | { kind: "delivered"; answered: AnsweredQuestion }
  /** Nobody waits any more: run this resume (the answer is recorded as it starts) and the turn continues. */
  | { kind: "resume"; prepared: PreparedResume };

/**
 * Answers a question from an entry that did not ask it (a server after a
 * restart, `openprogram answer`): while the process that asked still waits,
 * the answer goes to it and nothing runs again; otherwise the turn is to be
 * resumed by replay with the answer filled in, and the resume comes back
 * checked (`resumeTurn(prepared)` runs it). Throws SessionNotFoundError,
 * NoPendingQuestionError, InvalidAnswerError, and what prepareResume throws.
 */
export async function routeAnswer(options: RouteAnswerOptions): Promise<AnswerRoute> {
  assertValidSessionId(options.sessionId);
  const { sessionId, questionId, value, resolveProgram } = options;
  const db = options.db ?? activeContext()?.db ?? openStore();
  if (!storeInternals(db).exists(sessionId)) throw new SessionNotFoundError(sessionId);
  let turn: ResumableTurn;
  try {
    turn = turnWaitingFor(db, sessionId, questionId);
  } catch (error) {
    // No turn recorded what resuming needs (a chat-only session): so no question of it can be waiting.
    if (error instanceof NothingToResumeError)
      throw new NoPendingQuestionError(`Session '${sessionId}' has no question waiting for an answer.`);
    throw error;
  }
  checkAnswer(turn, value, questionId);
  const found = resolveProgram ? { resolveProgram } : {};
  if (turn.live) {
    const answered = await answerQuestion({
      sessionId,
      db,
      value,
      ...(questionId !== undefined ? { questionId } : {}),
    });
    if (answered.live) return { kind: "delivered", answered };
    // The asking process went away meanwhile: its answer is recorded, and the turn resumes from it.
    return { kind: "resume", prepared: await prepareResume({ sessionId, db, turnId: answered.turnId, ...found }) };
  }
  return {
    kind: "resume",
    prepared: await prepareResume({
      sessionId,
      db,
      turnId: turn.turnId,
      answer: value,
      ...(questionId !== undefined ? { questionId } : {}),
      ...found,
    }),
  };
}
