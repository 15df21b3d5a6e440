// The one recovery policy for what a turn that is over (ended, or left by a
// process that died) leaves unfinished. The store's end of turn, its crash
// recovery and the doctor all apply it, so they never disagree.
import type { SessionNode, SessionStatus } from "./types.js";

/** True for an askUser question still waiting for its answer. */
export function isPendingQuestion(node: SessionNode): boolean {
  return node.role === "user" && node.name === "ask_user" && node.metadata.status === "waiting";
}

/**
 * What a node left unfinished by a turn that is over is recorded as: a
 * running call becomes "interrupted"; a waiting question stays waiting, so
 * the question outlives the process and answering it resumes the turn.
 * Null: leave the node as it is.
 */
export function statusAfterAbandon(node: SessionNode): "interrupted" | null {
  const status = node.metadata.status;
  if (status === "running") return "interrupted";
  if (status === "waiting" && !isPendingQuestion(node)) return "interrupted";
  return null;
}

/** The session's status once no turn runs: an idle session with a question waiting `needs_input`. */
export function statusWhenIdle(nodes: readonly SessionNode[], status: SessionStatus): SessionStatus {
  return status === "idle" && nodes.some(isPendingQuestion) ? "needs_input" : status;
}
