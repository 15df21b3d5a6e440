import { randomUUID } from "node:crypto";
import type { BudgetLedger, LedgerReservation, Spend, SpendLimit } from "@openprogram/session-context/budgets";
import { DatabaseUnavailableError } from "../errors.js";
import { query, redactUrl } from "./pool.js";
import { LeasedRows } from "./renewal.js";

const NO_SPEND: Spend = { tokens: 0, cost: 0 };

/**
 * The core's BudgetLedger port in PostgreSQL, shared by every replica: a
 * session's and a program's day spending is one row of
 * `openprogram_budget_spend`, and each call in flight holds its estimate as a
 * row of `openprogram_budget_holds`. A reservation is one call of
 * `openprogram_budget_reserve`, which locks the key's row (`SELECT ... FOR
 * UPDATE`), so two replicas cannot both take the last of a budget; settling swaps the hold for what was used in one statement. Holds
 * are renewed with the replica's leases and expire with them: a replica that
 * dies gives its reservations back within the lease time.
 */
export class PostgresBudgetLedger extends LeasedRows implements BudgetLedger {
  async reserve(key: string, amount: Spend, limit: SpendLimit, seed?: () => Spend): Promise<LedgerReservation> {
    // What the key spent before any replica charged it (a session's earlier turns); ignored once its row exists.
    const start = seed?.() ?? NO_SPEND;
    const id = randomUUID();
    const result = await query<{ granted: boolean; dimension: "tokens" | "cost" | null; spent: number }>(
      this.pool,
      this.url,
      "SELECT granted, dimension, spent FROM openprogram_budget_reserve($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
      [
        key,
        id,
        this.owner,
        amount.tokens,
        amount.cost,
        limit.tokens ?? null,
        limit.cost ?? null,
        start.tokens,
        start.cost,
        this.ttlMs,
      ],
    );
    const row = result.rows[0];
    if (!row)
      throw new DatabaseUnavailableError(redactUrl(this.url), new Error("openprogram_budget_reserve returned nothing"));
    return row.granted
      ? { granted: true, id }
      : { granted: false, dimension: row.dimension ?? "tokens", spent: row.spent };
  }

  async settle(key: string, id: string, actual: Spend): Promise<Spend> {
    const result = await query<{ tokens: number; cost: number }>(
      this.pool,
      this.url,
      `WITH released AS (DELETE FROM openprogram_budget_holds WHERE id = $1)
       UPDATE openprogram_budget_spend SET tokens = tokens + $3, cost = cost + $4, updated_at = now()
         WHERE key = $2 RETURNING tokens, cost`,
      [id, key, actual.tokens, actual.cost],
    );
    const row = result.rows[0];
    return row ? { tokens: row.tokens, cost: row.cost } : { ...actual };
  }

  async chargeSeconds(key: string, seconds: number): Promise<number> {
    const result = await query<{ seconds: number }>(
      this.pool,
      this.url,
      `INSERT INTO openprogram_budget_spend AS b (key, seconds) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET seconds = b.seconds + EXCLUDED.seconds, updated_at = now()
       RETURNING seconds`,
      [key, seconds],
    );
    return result.rows[0]?.seconds ?? seconds;
  }

  /** What a key has spent (settled), or null when no replica has charged it yet. */
  async spent(key: string): Promise<Spend | null> {
    const result = await query<{ tokens: number; cost: number }>(
      this.pool,
      this.url,
      "SELECT tokens, cost FROM openprogram_budget_spend WHERE key = $1",
      [key],
    );
    return result.rows[0] ?? null;
  }

  /** Keeps this replica's holds alive (best effort: a renewal that fails lets them expire, as a dead replica's). */
  async renew(): Promise<void> {
    try {
      await query(
        this.pool,
        this.url,
        "UPDATE openprogram_budget_holds SET expires_at = now() + $2 * interval '1 millisecond' WHERE owner = $1",
        [this.owner, this.ttlMs],
      );
    } catch {
      // the next renewal tries again; meanwhile the holds may expire and be given back
    }
  }
}
