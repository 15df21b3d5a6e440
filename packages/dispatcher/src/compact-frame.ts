import {
  compactSession,
  requireRuntime,
  SessionNotFoundError,
  type CompactionEvent,
  type SessionDB,
  type SessionEvent,
} from "@openprogram/session-context";
import type { Client } from "./client.js";
import type { EventLogger } from "./logging.js";
import type { CompactFrame, CompactionFrame } from "./protocol.js";
import type { Subscriptions } from "./subscriptions.js";
import type { Turns } from "./turns.js";

/** A compaction event as the frame the session's clients receive. */
export function compactionFrame(event: CompactionEvent): CompactionFrame {
  return {
    type: "compaction",
    session_id: event.sessionId,
    phase: event.phase,
    reason: event.reason,
    ...(event.summaryId !== undefined ? { summary_id: event.summaryId } : {}),
    ...(event.covered !== undefined ? { covered: event.covered } : {}),
    ...(event.kept !== undefined ? { kept: event.kept } : {}),
    ...(event.tokensBefore !== undefined ? { tokens_before: event.tokensBefore } : {}),
    ...(event.tokensAfter !== undefined ? { tokens_after: event.tokensAfter } : {}),
    ...(event.error !== undefined ? { error: event.error } : {}),
  };
}

/** What answering a `compact` frame needs. */
export interface CompactFrameDependencies {
  db: SessionDB;
  turns: Turns;
  subscriptions: Subscriptions;
  log: EventLogger;
}

/**
 * Answers `compact`: compacts the session as a turn of its own (refused with
 * session_busy while a turn runs in it here; no turn starts meanwhile), streams
 * its events to the session's clients, and answers `compacted`.
 */
export async function answerCompactFrame(
  deps: CompactFrameDependencies,
  client: Client,
  frame: CompactFrame,
): Promise<void> {
  const { db, turns, subscriptions } = deps;
  const sessionId = frame.session_id;
  if (!(await db.getSession(sessionId))) throw new SessionNotFoundError(sessionId);
  const runtime = requireRuntime("the dispatcher runs without a model, so it cannot write a summary", {
    runtime: turns.runtime,
  });
  const onEvent = (event: SessionEvent): void => {
    if (event.type === "compaction") subscriptions.publish(sessionId, compactionFrame(event));
    else if (event.type === "node")
      subscriptions.publish(sessionId, { type: "node", session_id: sessionId, op: event.op, node: event.node });
    else if (event.type === "status")
      subscriptions.publish(sessionId, { type: "status", session_id: sessionId, status: event.status });
  };
  const result = await turns.whileDeleting(sessionId, () =>
    compactSession(sessionId, {
      db,
      runtime,
      source: "web",
      onEvent,
      ...(frame.keep_recent_tokens !== undefined ? { keepRecentTokens: frame.keep_recent_tokens } : {}),
    }),
  );
  deps.log.info("session_compacted", { client: client.id, session_id: sessionId, summary_id: result.summaryId });
  client.send({
    type: "compacted",
    session_id: sessionId,
    summary_id: result.summaryId,
    covered: result.covered,
    kept: result.kept,
    tokens_before: result.tokensBefore,
    tokens_after: result.tokensAfter,
  });
}
