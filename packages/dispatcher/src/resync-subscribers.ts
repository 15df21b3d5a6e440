import { hasErrorCode, type Budgets, type SessionDB } from "@openprogram/session-context";
import type { SessionDetailFrame } from "./protocol.js";
import { sessionDetailFrame } from "./session-detail.js";
import { latestTurn, questionFrameOf } from "./stopped-turns.js";
import type { Subscriptions } from "./subscriptions.js";

/**
 * Brings a session's subscribers here back in sync after frames may have been
 * missed, as a reconnecting client is: `resync` (sent before the first await,
 * so nothing sent after it is cleared by it), the `session_detail` snapshot
 * from the store, and, when no turn of the session runs anywhere, the question
 * waiting on disk (a running turn's owner sends its own live state).
 */
export async function resyncSubscribers(
  db: SessionDB,
  subscriptions: Subscriptions,
  sessionId: string,
  reason: string,
  runningElsewhere: boolean,
  budgets: Budgets | null = null,
): Promise<void> {
  subscriptions.deliver(sessionId, { type: "resync", session_id: sessionId, reason });
  let detail: SessionDetailFrame;
  try {
    detail = await sessionDetailFrame(db, sessionId, runningElsewhere, {}, budgets);
  } catch (error) {
    // Deleted while its frames were missed (session_deleted was one of them).
    if (!hasErrorCode(error, "session_not_found")) throw error;
    subscriptions.deliver(sessionId, { type: "session_deleted", session_id: sessionId });
    subscriptions.dropSession(sessionId);
    return;
  }
  subscriptions.deliver(sessionId, detail);
  if (runningElsewhere) return;
  const stored = questionFrameOf(latestTurn(db, sessionId));
  if (stored) subscriptions.deliver(sessionId, stored);
}
