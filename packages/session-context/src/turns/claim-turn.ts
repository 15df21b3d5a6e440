import type { ActiveContext } from "../context/types.js";
import { SessionBusyError } from "../errors.js";
import { processIdentity } from "../store/file-lock.js";
import { ownProcessStart } from "../store/process-liveness.js";
import { nowSeconds } from "../time/now-seconds.js";
import { claimIsLive, resumedBy, type ResumableTurn } from "./find-resumable.js";
import { storeInternals } from "../store/internal.js";

/**
 * Takes over the turn's top-level call for the current turn, or throws
 * SessionBusyError: under the session lock, so of two resumes of one turn
 * (in any processes) exactly one wins. The claim (`metadata.resumed_by`)
 * names the continuation's node id, this turn and this process.
 */
export async function claimTurn(context: ActiveContext, turn: ResumableTurn, continuationId: string): Promise<void> {
  const { db, sessionId } = context;
  const claimed = await db.updateNodeIf(sessionId, turn.nodeId, (node, liveTurns) => {
    if (liveTurns.includes(turn.turnId))
      throw new SessionBusyError(
        sessionId,
        `turn ${turn.turnId} is still running in another process; wait for it to finish or stop it`,
      );
    const previous = resumedBy(node);
    if (previous !== null) {
      // Continued meanwhile (so the turn to resume is now that one), or claimed by a resume still alive.
      if (storeInternals(db).nodeMapSync(sessionId).has(previous.node_id) || claimIsLive(previous, liveTurns, null))
        throw new SessionBusyError(
          sessionId,
          `turn ${turn.turnId} is being resumed by turn ${previous.turn_id}; wait for it to finish or stop it`,
        );
    }
    const { pid, host } = processIdentity();
    const start = ownProcessStart();
    return {
      metadata: {
        resumed_by: {
          turn_id: context.turn.turnId,
          node_id: continuationId,
          pid,
          host,
          ...(start === null ? {} : { start }),
          at: nowSeconds(),
        },
      },
    };
  });
  if (claimed) context.emit({ type: "node", sessionId, op: "update", node: claimed });
}

/** Gives the claim up when the continuation was never written (the resume stopped before the top-level call). */
export async function releaseClaim(context: ActiveContext, turn: ResumableTurn): Promise<void> {
  const { db, sessionId } = context;
  const released = await db.updateNodeIf(sessionId, turn.nodeId, (node) =>
    resumedBy(node)?.turn_id === context.turn.turnId ? { metadata: { resumed_by: null } } : null,
  );
  if (released) context.emit({ type: "node", sessionId, op: "update", node: released });
}
