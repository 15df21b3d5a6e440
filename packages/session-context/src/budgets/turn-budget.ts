import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/store-internals.js";
import { resolvePriceTable, type PriceTable } from "../usage/price-table.js";
import { sessionUsageOf } from "../usage/session-usage.js";
import { MemoryBudgetLedger, type BudgetLedger } from "./budget-ledger.js";
import type { BudgetLimit, Budgets, BudgetScope, Spend } from "./budget-types.js";
import { checkBudgets, dayIn } from "./check-budgets.js";

/** One scope's limit and where its spending is kept, as a call checks it. */
export interface ScopeLedger {
  scope: BudgetScope;
  limit: BudgetLimit;
  ledger: BudgetLedger;
  key: string;
  /** What the key spent before this ledger saw it (a session's earlier turns). */
  seed?: () => Spend;
  /** performance.now() when the scope began (wall-time limits). */
  started: number;
}

/** Program budgets of this process when no shared ledger is given: its turns share them. */
const processLedger = new MemoryBudgetLedger();

/** Where program spending under `budgets` is kept: their shared ledger, else this process's. */
export function programLedgerOf(budgets: Budgets): BudgetLedger {
  return budgets.ledger ?? processLedger;
}

/** The ledger key of a program's day: `program:<name>:<YYYY-MM-DD in its time zone>`. */
export function programKeyOf(program: NonNullable<Budgets["program"]>, ref: string | null, now: Date): string {
  return `program:${program.name ?? ref ?? "default"}:${dayIn(program.timeZone ?? "UTC", now)}`;
}

/**
 * The budgets of one turn and what it spent: made by `sessionContext` when
 * it is given budgets, shared by every context nested in the turn. Session
 * spending starts from what the session recorded before the turn, so a
 * session budget holds across turns and processes.
 */
export class TurnBudget {
  readonly started = performance.now();
  private readonly own = new MemoryBudgetLedger();
  private priceTable: PriceTable | null;
  private sessionSeed: Spend | null = null;

  constructor(
    readonly budgets: Budgets,
    private readonly where: { db: SessionDB; sessionId: string; program: () => string | null },
  ) {
    checkBudgets(budgets);
    this.priceTable = budgets.prices ?? null;
  }

  /** The price table cost limits are priced with (the configured one, read once). */
  get prices(): PriceTable {
    return (this.priceTable ??= resolvePriceTable());
  }

  /** The turn, session and program scopes that have limits, in that order. */
  scopes(now = new Date()): ScopeLedger[] {
    const { turn, session, program } = this.budgets;
    const scopes: ScopeLedger[] = [];
    if (turn) scopes.push({ scope: "turn", limit: turn, ledger: this.own, key: "turn", started: this.started });
    if (session)
      scopes.push({
        scope: "session",
        limit: session,
        ledger: this.budgets.ledger ?? this.own,
        key: `session:${this.where.sessionId}`,
        seed: () => (this.sessionSeed ??= this.recordedSessionSpend()),
        started: this.started,
      });
    if (program) {
      scopes.push({
        scope: "program",
        limit: program,
        ledger: programLedgerOf(this.budgets),
        key: programKeyOf(program, this.where.program(), now),
        started: this.started,
      });
    }
    return scopes;
  }

  /** What the session's record says it spent (tokens, and cost where its models have prices). */
  private recordedSessionSpend(): Spend {
    const { db, sessionId } = this.where;
    if (!storeInternals(db).exists(sessionId)) return { tokens: 0, cost: 0 };
    const ordered = storeInternals(db).snapshotSync(sessionId).ordered;
    const total = sessionUsageOf(sessionId, ordered, this.prices).total;
    return { tokens: total.inputTokens + total.outputTokens, cost: total.cost ?? 0 };
  }
}
