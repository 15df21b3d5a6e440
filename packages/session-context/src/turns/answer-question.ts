import { normaliseAnswer } from "../ask/ask-user.js";
import type { ActiveContext } from "../context/types.js";
import { activeContext } from "../context/storage.js";
import { NoPendingQuestionError, SessionNotFoundError } from "../errors.js";
import { assertValidSessionId } from "../ids.js";
import { isPendingQuestion } from "../store/abandoned-turn.js";
import { nowSeconds } from "../time/now-seconds.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import type { NodePatch, SessionNode } from "../store/types.js";
import { describeTurn, type ResumableTurn } from "./find-resumable.js";
import { storeInternals } from "../store/internal.js";

/** Options of `answerQuestion`. */
export interface AnswerQuestionOptions {
  sessionId: string;
  /** The answer (with choices: one of them, or its 1-based number). */
  value: string;
  /** The question answered; default: the one the session's latest turn waits for. */
  questionId?: string;
  db?: SessionDB;
}

/** What `answerQuestion` did. */
export interface AnsweredQuestion {
  sessionId: string;
  turnId: string;
  questionId: string;
  /** The answer as recorded (a choice number becomes the choice). */
  answer: string;
  /**
   * True when a live process runs the turn: it sees the answer and
   * continues. False: nobody is waiting any more; resume the turn
   * (`resumeTurn`) and it continues from the answer.
   */
  live: boolean;
}

/**
 * Records the answer to a question a turn waits for, from any process: the
 * ask_user node becomes `answered`. A process still waiting on that question
 * (a server, a CLI run) sees it and continues; when none is, resuming the
 * turn replays it with this answer. Throws SessionNotFoundError,
 * NoPendingQuestionError (nothing waits, or the question was answered
 * meanwhile: exactly one answer is ever recorded) or InvalidAnswerError.
 */
export async function answerQuestion(options: AnswerQuestionOptions): Promise<AnsweredQuestion> {
  assertValidSessionId(options.sessionId);
  const { sessionId } = options;
  const db = options.db ?? activeContext()?.db ?? openStore();
  if (!storeInternals(db).exists(sessionId)) throw new SessionNotFoundError(sessionId);
  await db.recover(sessionId);
  const turn = turnWaitingFor(db, sessionId, options.questionId);
  const answer = checkAnswer(turn, options.value, options.questionId);
  const question = turn.question as NonNullable<ResumableTurn["question"]>;
  const written = await db.updateNodeIf(sessionId, question.questionId, (node) =>
    answeredPatch(node, answer, "answer"),
  );
  if (!written) throw new NoPendingQuestionError(`Question ${question.questionId} was answered meanwhile.`);
  return { sessionId, turnId: turn.turnId, questionId: question.questionId, answer, live: turn.live };
}

/** The answer normalised against the turn's pending question; throws when none waits or another one does. */
export function checkAnswer(turn: ResumableTurn, value: string, questionId: string | undefined): string {
  if (!turn.question) {
    throw new NoPendingQuestionError(
      `Session '${turn.sessionId}' has no question waiting for an answer (turn ${turn.turnId} is ${turn.status}).`,
    );
  }
  if (questionId !== undefined && questionId !== turn.question.questionId) {
    throw new NoPendingQuestionError(
      `Question ${questionId} of session '${turn.sessionId}' is not waiting for an answer; the question waiting is ${turn.question.questionId}: ${JSON.stringify(turn.question.question)}.`,
    );
  }
  return normaliseAnswer(value, turn.question.choices, turn.question.question);
}

/** Records `answer` on the question through the current context (streamed as an event), if it still waits. */
export async function recordAnswer(context: ActiveContext, questionId: string, answer: string): Promise<void> {
  const written = await context.writer.updateIf(questionId, (node) => answeredPatch(node, answer, "resume"));
  if (written) context.emit({ type: "question_closed", sessionId: context.sessionId, questionId, outcome: "answered" });
}

function answeredPatch(node: SessionNode, answer: string, via: string): NodePatch | null {
  if (!isPendingQuestion(node)) return null;
  return { output: answer, metadata: { status: "answered", answered_at: nowSeconds(), answered_via: via } };
}

/** The turn the question belongs to (or the latest turn's, with no id). */
export function turnWaitingFor(db: SessionDB, sessionId: string, questionId: string | undefined): ResumableTurn {
  const latest = describeTurn({ db, sessionId });
  if (questionId === undefined || latest.question?.questionId === questionId) return latest;
  const nodes = storeInternals(db).nodeMapSync(sessionId);
  let node = nodes.get(questionId);
  if (!node || !isPendingQuestion(node)) return latest; // checkAnswer says the question is not waiting
  const seen = new Set<string>();
  while (node.caller !== "" && !seen.has(node.id)) {
    seen.add(node.id);
    const caller = nodes.get(node.caller);
    if (!caller) return latest;
    node = caller;
  }
  const turnId = node.metadata.turn_id;
  return typeof turnId === "string" ? describeTurn({ db, sessionId, turnId }) : latest;
}
