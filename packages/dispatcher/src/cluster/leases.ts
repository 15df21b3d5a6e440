import { SessionBusyError } from "@openprogram/session-context";
import { LeaseLostError } from "../errors.js";
import { query } from "./pool.js";
import { LeasedRows } from "./renewal.js";

/** What the lease holder is told when its lease ends before the turn does. */
export type OnLeaseLost = (error: LeaseLostError) => void;

interface Held {
  onLost: OnLeaseLost;
  /** Date.now() past which the lease may have expired without our having renewed it. */
  validUntil: number;
}

/**
 * One writer per session across the cluster: a row in
 * `openprogram_session_leases` names the replica running the session's turn
 * and when its lease expires. A live replica renews its rows every third of
 * the TTL; a dead one's rows expire and any replica may take them. A renewal
 * that finds a row gone, or that cannot reach the database before the lease
 * may have expired, tells the turn (LeaseLostError) so that it stops writing.
 */
export class SessionLeases extends LeasedRows {
  private readonly held = new Map<string, Held>();

  /** Takes the session's lease, or throws SessionBusyError naming the replica that holds it. */
  async acquire(sessionId: string, onLost: OnLeaseLost): Promise<void> {
    const asked = Date.now();
    const taken = await query<{ owner: string }>(
      this.pool,
      this.url,
      `INSERT INTO openprogram_session_leases (session_id, owner, expires_at)
         VALUES ($1, $2, now() + $3 * interval '1 millisecond')
       ON CONFLICT (session_id) DO UPDATE
         SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, acquired_at = now()
         WHERE openprogram_session_leases.expires_at < now()
       RETURNING owner`,
      [sessionId, this.owner, this.ttlMs],
    );
    if (taken.rowCount === 0) {
      const holder = await query<{ owner: string }>(
        this.pool,
        this.url,
        "SELECT owner FROM openprogram_session_leases WHERE session_id = $1",
        [sessionId],
      );
      throw new SessionBusyError(
        sessionId,
        `another turn is running on replica ${holder.rows[0]?.owner ?? "(just released)"}; wait for it to finish or stop it`,
      );
    }
    this.held.set(sessionId, { onLost, validUntil: asked + this.ttlMs });
  }

  /** Gives the lease back (best effort: an unreachable database lets it expire instead). */
  async release(sessionId: string): Promise<void> {
    if (!this.held.delete(sessionId)) return;
    try {
      await query(this.pool, this.url, "DELETE FROM openprogram_session_leases WHERE session_id = $1 AND owner = $2", [
        sessionId,
        this.owner,
      ]);
    } catch {
      // expires by itself within the TTL
    }
  }

  /** The replica holding a live lease on the session, or null. */
  async ownerOf(sessionId: string): Promise<string | null> {
    const found = await query<{ owner: string }>(
      this.pool,
      this.url,
      "SELECT owner FROM openprogram_session_leases WHERE session_id = $1 AND expires_at > now()",
      [sessionId],
    );
    return found.rows[0]?.owner ?? null;
  }

  /** Number of leases this replica holds. */
  get count(): number {
    return this.held.size;
  }

  /** Extends every lease held here in one statement; leases that are gone, or may have expired, are lost. */
  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    // The leases as they are now: one released and taken again while the statement runs is a new lease, left alone.
    const asked = new Map(this.held);
    const ids = [...asked.keys()];
    const askedAt = Date.now();
    let renewed: Set<string>;
    try {
      const result = await query<{ session_id: string }>(
        this.pool,
        this.url,
        `UPDATE openprogram_session_leases SET expires_at = now() + $3 * interval '1 millisecond'
          WHERE owner = $1 AND session_id = ANY($2) RETURNING session_id`,
        [this.owner, ids, this.ttlMs],
      );
      renewed = new Set(result.rows.map((row) => row.session_id));
    } catch (error) {
      // The database is unreachable: a lease is kept until it may have expired, then its turn is told.
      for (const [sessionId, held] of this.held)
        if (Date.now() >= held.validUntil)
          this.lose(sessionId, held, `the database was unreachable: ${(error as Error).message}`);
      return;
    }
    for (const [sessionId, held] of asked) {
      if (this.held.get(sessionId) !== held) continue;
      if (renewed.has(sessionId)) held.validUntil = askedAt + this.ttlMs;
      else this.lose(sessionId, held, "another replica took it after it expired");
    }
  }

  private lose(sessionId: string, held: Held, why: string): void {
    this.held.delete(sessionId);
    held.onLost(new LeaseLostError(sessionId, why));
  }
}
