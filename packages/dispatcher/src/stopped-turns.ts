import { hasErrorCode, type SessionDB } from "@openprogram/session-context";
import { describeTurn, type ResumableTurn } from "@openprogram/session-context/turns";
import type { QuestionFrame, ResumableTurnInfo } from "./protocol.js";

/**
 * The session's latest turn as the core describes it for resuming, or null
 * when it has none that recorded what resuming needs (a chat-only session).
 */
export function latestTurn(db: SessionDB, sessionId: string): ResumableTurn | null {
  try {
    return describeTurn({ db, sessionId });
  } catch (error) {
    // No turn recorded what resuming needs (a chat), or the session went away meanwhile: nothing to offer.
    if (hasErrorCode(error, "nothing_to_resume") || hasErrorCode(error, "session_not_found")) return null;
    throw error;
  }
}

/** What `session_detail` says a `resume` would continue, or null. */
export function resumableInfo(turn: ResumableTurn | null): ResumableTurnInfo | null {
  if (!turn?.resumable) return null;
  return {
    turn_id: turn.turnId,
    name: turn.name,
    status: turn.status,
    question_id: turn.question?.questionId ?? null,
    resume_helps: turn.resumeHelps,
    finished_calls: turn.finishedCalls,
    error: turn.error,
  };
}

/**
 * The question a turn of another process (or of one that stopped: a server
 * restarted, a CLI run ended) waits for, as a `question` frame: answering it
 * goes to that process, or resumes the turn here.
 */
export function questionFrameOf(turn: ResumableTurn | null): QuestionFrame | null {
  if (!turn?.question) return null;
  return {
    type: "question",
    session_id: turn.sessionId,
    question_id: turn.question.questionId,
    question: turn.question.question,
    choices: turn.question.choices,
    timeout_ms: null,
  };
}
