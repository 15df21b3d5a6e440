import { isSuspension, SessionNotFoundError } from "../errors.js";
import { isPendingQuestion } from "../store/abandoned-turn.js";
import { nowSeconds } from "../time/now-seconds.js";
import { isUnfinished, type NodeStatus } from "../store/node-status.js";
import type { SessionNode } from "../store/types.js";
import { requireContext } from "./accessors.js";
import type { SessionEvent } from "./events.js";
import { storeInternals } from "../store/internal.js";

/**
 * Begins the current turn now (session status running, turn lease) for work
 * this turn does in another process, so the turn is committed when its
 * context ends even if this process writes nothing itself.
 */
export async function beginCurrentTurn(): Promise<void> {
  await requireContext("beginCurrentTurn()").beginTurn();
}

/**
 * Passes an event that happened elsewhere (a child process of this turn) to
 * the current context's `onEvent`, in order, as if it had happened here.
 */
export function relaySessionEvent(event: SessionEvent): void {
  requireContext("relaySessionEvent()").emit(event);
}

/**
 * Records every listed node that is still unfinished (running, waiting) with
 * `status` (e.g. "killed" after a child process was killed), through the
 * current context so the change is streamed too. While the turn is
 * suspended (its signal aborted with TurnSuspendedError: a server shutting
 * down) a question still waiting stays waiting, so answering it later resumes
 * the turn. Returns the nodes changed.
 */
export async function recordAbandonedNodes(
  nodeIds: readonly string[],
  status: Extract<NodeStatus, "killed" | "interrupted">,
): Promise<SessionNode[]> {
  const context = requireContext("recordAbandonedNodes()");
  if (!storeInternals(context.db).exists(context.sessionId)) throw new SessionNotFoundError(context.sessionId);
  const wanted = new Set(nodeIds);
  const suspended = context.signal.aborted && isSuspension(context.signal.reason);
  const nodes = storeInternals(context.db).snapshotSync(context.sessionId).ordered;
  const changed: SessionNode[] = [];
  for (const node of nodes) {
    if (!wanted.has(node.id) || !isUnfinished(node) || (suspended && isPendingQuestion(node))) continue;
    changed.push(await context.writer.update(node.id, { metadata: { status, [`${status}_at`]: nowSeconds() } }));
  }
  return changed;
}
