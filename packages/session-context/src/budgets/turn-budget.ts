import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import { resolvePriceTable, type PriceTable } from "../usage/price-table.js";
import { sessionUsageOf } from "../usage/session-usage.js";
import { recordedSeconds } from "../usage/wall-time.js";
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
  /** The wall time the scope has used, in seconds (asked only when the limit has `seconds`). */
  secondsPassed: () => number | Promise<number>;
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
  private recorded: { spend: Spend; seconds: number } | null = null;
  /** performance.now() up to which this turn's time was added to the program's day (program seconds). */
  private chargedUntil = this.started;

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
    const { turn, session } = this.budgets;
    const scopes: ScopeLedger[] = [];
    if (turn)
      scopes.push({ scope: "turn", limit: turn, ledger: this.own, key: "turn", secondsPassed: () => this.elapsed() });
    if (session)
      scopes.push({
        scope: "session",
        limit: session,
        ledger: this.budgets.ledger ?? this.own,
        key: `session:${this.where.sessionId}`,
        seed: () => this.recordedSpend().spend,
        // One turn of a session runs at a time (its lease): what earlier turns recorded, plus this one so far.
        secondsPassed: () => this.recordedSpend().seconds + this.elapsed(),
      });
    const program = this.programScope(now);
    if (program) scopes.push(program);
    return scopes;
  }

  /**
   * Adds the turn's time not yet counted to its program's day, when a program wall-time budget applies: called
   * once the turn ends, so the time after its last model call counts too.
   */
  async close(): Promise<void> {
    const program = this.programScope(new Date());
    if (program?.limit.seconds !== undefined) await program.secondsPassed();
  }

  /** Seconds since the turn began. */
  private elapsed(): number {
    return (performance.now() - this.started) / 1000;
  }

  private programScope(now: Date): ScopeLedger | null {
    const program = this.budgets.program;
    if (!program) return null;
    const ledger = programLedgerOf(this.budgets);
    const key = programKeyOf(program, this.where.program(), now);
    return {
      scope: "program",
      limit: program,
      ledger,
      key,
      // Concurrent turns of the program each add their own time: the day's total is the sum of its turns' time.
      secondsPassed: () => {
        const until = performance.now();
        const seconds = (until - this.chargedUntil) / 1000;
        this.chargedUntil = until;
        return ledger.chargeSeconds(key, seconds);
      },
    };
  }

  /**
   * What the session's record says it spent before this turn (read once): tokens, cost where its models have
   * prices, and the time its top-level calls and replies ran (each records its `duration_seconds`).
   */
  private recordedSpend(): { spend: Spend; seconds: number } {
    if (this.recorded) return this.recorded;
    const { db, sessionId } = this.where;
    if (!storeInternals(db).exists(sessionId)) return (this.recorded = { spend: { tokens: 0, cost: 0 }, seconds: 0 });
    const ordered = storeInternals(db).snapshotSync(sessionId).ordered;
    const total = sessionUsageOf(sessionId, ordered, this.prices).total;
    return (this.recorded = {
      spend: { tokens: total.inputTokens + total.outputTokens, cost: total.cost ?? 0 },
      seconds: recordedSeconds(ordered),
    });
  }
}
