import { randomUUID } from "node:crypto";
import type { CapacityAnswer, CapacityLimit, CapacityStore } from "@openprogram/session-context/budgets";
import { DatabaseUnavailableError } from "../errors.js";
import { query, redactUrl } from "./pool.js";
import { LeasedRows } from "./renewal.js";

/** A replica that stops asking (it died, or its callers gave up) loses its place in line after this long. */
const WAITER_TTL_MS = 1_000;

/**
 * The core's CapacityStore port in PostgreSQL, shared by every replica: the
 * provider `limits` (maxConcurrent, requestsPerMinute, tokensPerMinute) hold
 * across the cluster. A request in flight is a row of
 * `openprogram_capacity_slots`; taking one is a call of
 * `openprogram_capacity_acquire`, which locks the key for its transaction, so
 * two replicas cannot both take the last slot, and gives room to the replica
 * whose first caller has waited longest (`openprogram_capacity_waiters`), so
 * a replica that asks again the moment its own request ends cannot starve
 * the others. Slots are renewed with the
 * replica's leases: a replica that dies stops holding its requests in flight
 * within the lease time (they still count in their minute: they were sent).
 */
export class PostgresCapacity extends LeasedRows implements CapacityStore {
  /** Slots this replica holds in flight (the only ones it renews: a release that failed expires). */
  private readonly held = new Set<string>();

  async tryAcquire(key: string, limit: CapacityLimit, tokens: number, waitingSince: number): Promise<CapacityAnswer> {
    const id = randomUUID();
    const result = await query<{ granted: boolean; full_limit: string | null }>(
      this.pool,
      this.url,
      `SELECT granted, full_limit
         FROM openprogram_capacity_acquire($1, $2, $3, $4, $5, $6, $7, $8, to_timestamp($9 / 1000.0), $10)`,
      [
        key,
        id,
        this.owner,
        tokens,
        limit.maxConcurrent ?? null,
        limit.requestsPerMinute ?? null,
        limit.tokensPerMinute ?? null,
        this.ttlMs,
        waitingSince,
        WAITER_TTL_MS,
      ],
    );
    const row = result.rows[0];
    if (!row)
      throw new DatabaseUnavailableError(
        redactUrl(this.url),
        new Error("openprogram_capacity_acquire returned nothing"),
      );
    if (!row.granted) return { granted: false, limit: row.full_limit ?? "maxConcurrent" };
    this.held.add(id);
    return { granted: true, id };
  }

  async release(id: string, usedTokens: number | null): Promise<void> {
    this.held.delete(id);
    await query(
      this.pool,
      this.url,
      "UPDATE openprogram_capacity_slots SET in_flight = false, tokens = coalesce($2, tokens) WHERE id = $1",
      [id, usedTokens],
    );
  }

  /** Requests of this replica in flight now (for tests and metrics). */
  get inFlight(): number {
    return this.held.size;
  }

  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    try {
      await query(
        this.pool,
        this.url,
        `UPDATE openprogram_capacity_slots SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
          WHERE owner = $1 AND in_flight AND id = ANY($2::uuid[])`,
        [this.owner, [...this.held], this.ttlMs],
      );
    } catch {
      // the next renewal tries again; meanwhile the slots may expire and be taken by others
    }
  }
}
