import { randomUUID } from "node:crypto";
import type { Spend } from "./spend.js";

/** What a scope may spend in all: an absent dimension is unlimited. */
export interface SpendLimit {
  tokens?: number | undefined;
  cost?: number | undefined;
}

/** A ledger's answer to a reservation. */
export type LedgerReservation =
  | { granted: true; id: string }
  /** `spent` counts what was settled and what other calls hold in flight. */
  | { granted: false; dimension: "tokens" | "cost"; spent: number };

/**
 * Where spending against a budget is kept: the port a cluster implements in
 * its shared database so replicas cannot both spend the last of a budget.
 * A call reserves its estimate before it is sent and settles what it really
 * used after; a reservation never settled (its process died) must be given
 * back by the ledger itself (a lease).
 */
export interface BudgetLedger {
  /**
   * Holds `amount` against `key` when what is spent, plus what is held, plus
   * `amount`, stays within `limit` on every dimension; atomically, against
   * every other caller of the same ledger. `seed` is what the key has spent
   * already when the ledger has never seen it (a session's earlier record).
   */
  reserve(key: string, amount: Spend, limit: SpendLimit, seed?: () => Spend): Promise<LedgerReservation>;
  /** Replaces a reservation with what the call actually used; resolves to the key's total spent since. */
  settle(key: string, id: string, actual: Spend): Promise<Spend>;
  /**
   * Adds wall time that passed (a program's turns' seconds: time is spent, never reserved) to `key`; resolves to
   * the key's total seconds since, every caller's included.
   */
  chargeSeconds(key: string, seconds: number): Promise<number>;
  /** What `key` has spent (settled), or null when nothing was charged to it yet (shown beside the budget). */
  spent?(key: string): Promise<Spend | null>;
}

/** A ledger in this process's memory: one process's turns share it (the default for program budgets). */
export class MemoryBudgetLedger implements BudgetLedger {
  private readonly entries = new Map<string, { spent: Spend; held: Map<string, Spend> }>();
  private readonly seconds = new Map<string, number>();

  reserve(key: string, amount: Spend, limit: SpendLimit, seed?: () => Spend): Promise<LedgerReservation> {
    let entry = this.entries.get(key);
    if (!entry)
      this.entries.set(key, (entry = { spent: { ...(seed?.() ?? { tokens: 0, cost: 0 }) }, held: new Map() }));
    const committed = { ...entry.spent };
    for (const held of entry.held.values()) {
      committed.tokens += held.tokens;
      committed.cost += held.cost;
    }
    for (const dimension of ["tokens", "cost"] as const) {
      const cap = limit[dimension];
      if (cap !== undefined && committed[dimension] + amount[dimension] > cap)
        return Promise.resolve({ granted: false, dimension, spent: committed[dimension] });
    }
    const id = randomUUID();
    entry.held.set(id, { ...amount });
    return Promise.resolve({ granted: true, id });
  }

  settle(key: string, id: string, actual: Spend): Promise<Spend> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve({ ...actual });
    entry.held.delete(id);
    entry.spent.tokens += actual.tokens;
    entry.spent.cost += actual.cost;
    return Promise.resolve({ ...entry.spent });
  }

  chargeSeconds(key: string, seconds: number): Promise<number> {
    const total = (this.seconds.get(key) ?? 0) + seconds;
    this.seconds.set(key, total);
    return Promise.resolve(total);
  }

  spent(key: string): Promise<Spend | null> {
    const entry = this.entries.get(key);
    return Promise.resolve(entry ? { ...entry.spent } : null);
  }
}
