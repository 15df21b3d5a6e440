import { SessionNotFoundError, type SessionDB, type SessionEvent } from "@openprogram/session-context";
import { compactionRecord, compactSession } from "@openprogram/session-context/compaction";
import { requireRuntime } from "@openprogram/session-context/runtime";
import type { Client } from "./client.js";
import type { EventLogger } from "./logging.js";
import type { CompactFrame } from "./protocol.js";
import type { Subscriptions } from "./subscriptions.js";
import type { Turns } from "./turns.js";

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
    if (event.type === "compaction") subscriptions.publish(sessionId, compactionRecord(event));
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
