import type { PriceTable } from "../usage/price-table.js";
import type { BudgetLedger } from "./budget-ledger.js";
import type { Spend } from "./spend.js";

/** The four scopes a budget applies at. */
export type BudgetScope = "exec" | "turn" | "session" | "program";

/** What a budget limits: tokens (input + output), cost (US dollars at the price table's prices), wall time. */
export type BudgetDimension = "tokens" | "cost" | "seconds";

/** Limits at one scope; an absent limit is no limit. */
export interface BudgetLimit {
  /** Input plus output tokens. */
  tokens?: number | undefined;
  /** US dollars, priced with the configured price table (a model without a price fails before its call). */
  cost?: number | undefined;
  /**
   * Wall time in seconds, checked before and after each model call: an exec's or a turn's since it began, a
   * session's turns' over its life (what earlier turns recorded counts), a program's turns' per day.
   */
  seconds?: number | undefined;
}

/** The program scope: tokens, cost and its turns' wall time per calendar day in a named time zone. */
export interface ProgramBudgetLimit extends BudgetLimit {
  /** IANA time zone whose midnight starts a new day (default "UTC"). */
  timeZone?: string | undefined;
  /** Which program the day's spending is counted for (default: the turn's program ref, else "default"). */
  name?: string | undefined;
}

/**
 * Budgets of a session context (`sessionContext({ budgets })`): every model
 * call made under it is checked against each scope before it is sent (its
 * estimated input plus `maxTokens`) and after (what it actually used).
 */
export interface Budgets {
  /** The default limit of each `exec` (its tool loop included); `exec(..., { budget })` overrides it. */
  exec?: BudgetLimit | undefined;
  /** One turn. */
  turn?: BudgetLimit | undefined;
  /** One session over its life (what earlier turns recorded counts; seconds: the time its turns ran). */
  session?: BudgetLimit | undefined;
  /** One program per calendar day. */
  program?: ProgramBudgetLimit | undefined;
  /**
   * Where session and program spending is kept: default, the session's own
   * record (session) and this process's memory (program); a cluster passes
   * one shared by its replicas (the dispatcher's PostgreSQL ledger).
   */
  ledger?: BudgetLedger | undefined;
  /** Prices for cost budgets; default the configured price table (`resolvePriceTable`). */
  prices?: PriceTable | undefined;
}

export type { Spend } from "./spend.js";

export const NO_SPEND: Readonly<Spend> = Object.freeze({ tokens: 0, cost: 0 });
