import { existsSync } from "node:fs";
import { SessionNotFoundError } from "../errors.js";
import { clipLine, clipText } from "../messages/clip-text.js";
import { nowSeconds } from "../time/now-seconds.js";
import { statusWhenIdle } from "./abandoned-turn.js";
import type { NodeLog } from "./node-log.js";
import { keepLeaseThroughTurn } from "./lease-lock.js";
import { assertSafeToWrite } from "./safe-paths.js";
import type { EndTurnOptions } from "./session-db-options.js";
import type { StoreState } from "./store-state.js";
import type { TurnCommit } from "./turn-commit.js";
import { openSpareStock } from "./spare-files.js";
import { releaseTurnLease, liveTurnLeases, takeTurnLease } from "./turn-lease.js";
import type { TurnRecovery } from "./turn-recovery.js";
import type { SessionNode, SessionStatus } from "./types.js";
import { recordUsageTotal } from "./usage-total.js";

/**
 * A turn from its lease to its commit: the lease taken under the session
 * lock, the status the registry shows meanwhile, and the end that records what
 * the turn left unfinished, commits, sets status and preview and lets the
 * lease go. See SessionDB for each method.
 */
export class TurnLifecycle {
  constructor(
    private readonly state: StoreState,
    private readonly nodes: NodeLog,
    private readonly commit: TurnCommit,
    private readonly recovery: TurnRecovery,
  ) {}

  /**
   * By turn: ends what the turn keeps while it runs, the session lock between its writes (keepLeaseThroughTurn)
   * and the session's spare files (spare-files.ts).
   */
  private readonly turnHolds = new Map<string, () => void>();

  async beginTurn(sessionId: string, turnId: string): Promise<void> {
    const paths = this.state.requirePaths(sessionId);
    assertSafeToWrite(paths, [paths.turns]);
    await this.state.withSessionLock(sessionId, async () => {
      if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
      await takeTurnLease(paths, turnId);
    });
    // The turn's writes come a model's reply apart: the session lock is kept between them (lease-lock.ts), and
    // files they will rename into place are made while the turn waits for its model (spare-files.ts).
    this.turnHolds.get(turnKey(sessionId, turnId))?.();
    const releaseLease = keepLeaseThroughTurn(paths.lock);
    const closeSpares = openSpareStock(paths);
    this.turnHolds.set(turnKey(sessionId, turnId), () => {
      closeSpares();
      releaseLease();
    });
    await this.setStatus(sessionId, "running");
  }

  async endTurn(sessionId: string, turnId: string, options: EndTurnOptions): Promise<string | null> {
    const { state } = this;
    const paths = state.requirePaths(sessionId);
    try {
      if (liveTurnLeases(paths, turnId).length === 0) await this.recovery.interruptUnfinished(sessionId);
      // meta.json's updated_at goes into the turn's commit: written after it, it left every
      // session repository dirty (` M meta.json`) and doctor reporting an uncommitted tail. A turn whose last write
      // moved the head wrote it then (meta-stamp.ts).
      const stamped = state.metaStamps.take(paths);
      const updatedAt = stamped ?? nowSeconds();
      // usage.json and meta.json at once: each is a creation and a rename on the thread pool, which under
      // concurrent turns each wait behind the other sessions' fdatasyncs.
      const written = await Promise.allSettled([
        recordUsageTotal(paths, () => state.history.usageBuckets(paths)),
        stamped === null
          ? state.withSessionLock(sessionId, () =>
              state.history.writeLogged(
                paths,
                [state.metaWrite(sessionId, state.readMetaSync(sessionId), { updated_at: updatedAt })],
                false,
              ),
            )
          : Promise.resolve(),
      ]);
      for (const outcome of written) if (outcome.status === "rejected") throw outcome.reason;
      // One fdatasync of the log makes meta.json and everything the turn wrote without waiting durable; the commit
      // runs meanwhile (it reads the files, not their durability), and the turn ends once both are done.
      const synced = state.history.settle(paths).then(
        () => null,
        (error: unknown) => error as Error,
      );
      const message = options.message ?? `turn ${turnId}`;
      const sha = await this.commit.commitTurn(sessionId, message).finally(async () => {
        const failure = await synced;
        if (failure) throw failure;
      });
      const nodes = this.nodes.snapshot(sessionId).ordered;
      const preview = previewOf(nodes);
      // A turn that ends with a question still waiting leaves the session needs_input (see abandoned-turn.ts).
      const status = statusWhenIdle(nodes, options.status);
      state.queueEntry(sessionId, (current) => ({
        ...current,
        status,
        updated_at: updatedAt,
        ...(preview ? { preview } : {}),
      }));
      return sha;
    } catch (error) {
      // The turn is over even when its last writes failed (a full disk): its status must not stay "running".
      try {
        const status = statusWhenIdle(this.nodes.snapshot(sessionId).ordered, options.status);
        state.queueEntry(sessionId, (current) => ({ ...current, status }));
      } catch {
        // deleted meanwhile, or unreadable: recovery decides from the files
      }
      throw error;
    } finally {
      releaseTurnLease(paths, turnId);
      this.turnHolds.get(turnKey(sessionId, turnId))?.();
      this.turnHolds.delete(turnKey(sessionId, turnId));
    }
  }

  async setStatus(sessionId: string, status: SessionStatus): Promise<void> {
    this.state.queueEntry(sessionId, (current) => ({ ...current, status }));
  }
}

/** What a listing shows of a session: its last top-level user message or code call. */
function previewOf(nodes: readonly SessionNode[]): string | undefined {
  for (let index = nodes.length - 1; index >= 0; index--) {
    const node = nodes[index] as SessionNode;
    if (node.caller !== "") continue;
    if (node.role === "user" && node.name !== "ask_user" && typeof node.output === "string")
      return clipLine(node.output, 120);
    if (node.role === "code") return clipLine(`${node.name}(${summariseInput(node.input)})`, 120);
  }
  return undefined;
}

function summariseInput(input: unknown): string {
  if (input && typeof input === "object") {
    const first = Object.values(input as Record<string, unknown>).find((value) => typeof value === "string");
    if (typeof first === "string") return JSON.stringify(clipText(first, 60));
  }
  return "";
}

function turnKey(sessionId: string, turnId: string): string {
  return `${sessionId}\u0000${turnId}`;
}
