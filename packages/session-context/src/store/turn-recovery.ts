import { existsSync } from "node:fs";
import { StoreWriteError } from "../errors.js";
import { nowSeconds } from "../time/now-seconds.js";
import { statusAfterAbandon, statusWhenIdle } from "./abandoned-turn.js";
import { orderedNodes } from "./history.js";
import type { NodeLog } from "./node-log.js";
import type { StoreState } from "./store-state.js";
import { hasLeaseFiles, liveTurnLeases } from "./turn-lease.js";

/** Session statuses that say a turn holds the session. */
const TURN_STATUSES = new Set<string>(["running", "needs_input"]);

/**
 * The recovery policy for a turn whose process is gone, in one place: its
 * running nodes are recorded "interrupted" (a waiting question stays waiting)
 * and a session left "running" or "needs_input" becomes "idle", or
 * "needs_input" while a question waits (abandoned-turn.ts). A turn's own end
 * applies the same policy to what it leaves unfinished.
 */
export class TurnRecovery {
  constructor(
    private readonly state: StoreState,
    private readonly nodes: NodeLog,
  ) {}

  /** See SessionDB.recover. */
  async recover(sessionId: string): Promise<boolean> {
    const { state } = this;
    const paths = state.paths(sessionId);
    state.noteRecoveryChecked(sessionId);
    if (!existsSync(paths.meta) || liveTurnLeases(paths).length > 0) return false;
    const entry = (await state.registry.read())[sessionId];
    // Decided from the session's own files, not only the registry: a turn's "running" is queued for the registry
    // (registry.ts), so a process killed before that flush leaves running nodes under a registry that says idle.
    const nodes = this.nodes.snapshot(sessionId).ordered;
    const unfinished = nodes.some((node) => statusAfterAbandon(node) !== null);
    if (!unfinished && (!entry || !TURN_STATUSES.has(entry.status))) return false;
    // A session that only waits for an answer is already as recovery leaves it: nothing to write.
    if (!unfinished && statusWhenIdle(nodes, "idle") === entry?.status) return false;
    try {
      return await state.withSessionLock(sessionId, async () => {
        // Checked again under the lock a turn takes its lease under: a turn that began meanwhile is left alone.
        if (liveTurnLeases(paths).length > 0) return false;
        await this.recoverAbandonedTurn(sessionId);
        return true;
      });
    } catch (error) {
      // A read-only store still reads; recovery waits for a writable one.
      if (error instanceof StoreWriteError) return false;
      throw error;
    }
  }

  /**
   * Whether entering the session for a turn should run `recover` (see
   * StoreInternals.needsRecoveryCheck).
   */
  needsRecoveryCheck(sessionId: string): boolean {
    return !this.state.recoveryChecked.has(sessionId) || hasLeaseFiles(this.state.paths(sessionId));
  }

  /** A turn's end: its unfinished nodes are recorded as recovery records them, unless none are. */
  async interruptUnfinished(sessionId: string): Promise<void> {
    // The common turn end leaves nothing unfinished: no lock section for it (one is taken when there is something).
    const nodes = orderedNodes(this.state.history.refresh(this.state.paths(sessionId)));
    if (!nodes.some((node) => statusAfterAbandon(node) !== null)) return;
    await this.state.withSessionLock(sessionId, () => this.interruptUnfinishedLocked(sessionId));
  }

  /** Call under the session lock, with no live turn lease. */
  private async recoverAbandonedTurn(sessionId: string): Promise<void> {
    await this.interruptUnfinishedLocked(sessionId);
    const status = statusWhenIdle(this.nodes.snapshot(sessionId).ordered, "idle");
    await this.state.updateEntry(sessionId, (current) =>
      TURN_STATUSES.has(current.status) ? { ...current, status } : current,
    );
  }

  /** Applies the recovery policy (statusAfterAbandon) to every unfinished node; call under the session lock. */
  private async interruptUnfinishedLocked(sessionId: string): Promise<void> {
    const { history } = this.state;
    const paths = this.state.paths(sessionId);
    const abandoned = orderedNodes(history.refresh(paths)).filter((node) => statusAfterAbandon(node) !== null);
    for (const node of abandoned) {
      await history.update(paths, sessionId, node.id, {
        metadata: { status: "interrupted", interrupted_at: nowSeconds() },
      });
    }
  }
}
