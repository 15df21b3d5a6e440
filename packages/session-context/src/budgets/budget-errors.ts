import { OpenProgramError } from "../errors.js";
import type { BudgetDimension, BudgetScope } from "./budget-types.js";

/** How each scope's budget is raised, for the error's last sentence. */
const RAISE: Record<BudgetScope, Partial<Record<BudgetDimension, string>> & { config: string }> = {
  exec: { config: 'exec(..., { budget }) or "budgets": { "exec": ... } in openprogram.config.json' },
  turn: {
    tokens: "--max-turn-tokens",
    cost: "--max-turn-cost",
    seconds: "--max-turn-seconds",
    config: '"budgets": { "turn": ... } in openprogram.config.json',
  },
  session: {
    tokens: "--max-session-tokens",
    cost: "--max-session-cost",
    seconds: "--max-session-seconds",
    config: '"budgets": { "session": ... } in openprogram.config.json',
  },
  program: { config: '"budgets": { "program": ... } in openprogram.config.json (it also starts over each day)' },
};

/** How the message names each budget. */
const NOUN: Record<BudgetDimension, string> = { tokens: "token", cost: "cost", seconds: "time" };

/** A model call would cross, or did cross, a budget: the turn stops, committed and resumable once the budget is raised. */
export class BudgetExceededError extends OpenProgramError {
  readonly code = "budget_exceeded";
  constructor(
    readonly scope: BudgetScope,
    readonly dimension: BudgetDimension,
    readonly limit: number,
    readonly spent: number,
    /** What the refused call would have added (its estimate), or 0 when the call already happened. */
    readonly needed: number,
  ) {
    const raise = RAISE[scope];
    const flag = raise[dimension];
    super(
      `The ${scope} ${NOUN[dimension]} budget is exceeded: limit ${amount(dimension, limit)}, ` +
        `${dimension === "seconds" ? "passed" : "spent"} ${amount(dimension, spent)}` +
        (needed > 0
          ? ` and the next model call needs up to ${amount(dimension, needed)} more, so it was not sent`
          : "") +
        `. Raise it (${flag ? `${flag} N, or ` : ""}${raise.config}) and resume the turn ` +
        `(openprogram resume <session>${flag ? ` ${flag} N` : ""}).`,
    );
  }
}

/** A cost budget applies, but the model has no price: its cost could not be counted, so the call is not sent. */
export class UnpricedModelError extends OpenProgramError {
  readonly code = "budget_unpriced_model";
  constructor(
    readonly model: string,
    readonly scope: BudgetScope,
    reason: string,
  ) {
    super(
      `A ${scope} cost budget applies, but model ${JSON.stringify(model)} has no price (${reason}), so its cost ` +
        `cannot be counted and the call was not sent. Add its price to "prices" in openprogram.config.json, ` +
        "or use a token budget instead.",
    );
  }
}

/** A budget given in code or configuration that is not one. */
export class InvalidBudgetError extends OpenProgramError {
  readonly code = "invalid_budget";
  constructor(message: string) {
    super(message);
  }
}

/**
 * Which budget a recorded BudgetExceededError names, read back from its message (records keep an error's code and
 * message, not its fields), or null when the message is not one of this class's.
 */
export function budgetOfMessage(message: string): { scope: BudgetScope; dimension: BudgetDimension } | null {
  const match = /^The (exec|turn|session|program) (token|cost|time) budget is exceeded/.exec(message);
  if (!match) return null;
  const dimension = (Object.keys(NOUN) as BudgetDimension[]).find((key) => NOUN[key] === match[2]);
  return dimension ? { scope: match[1] as BudgetScope, dimension } : null;
}

function amount(dimension: BudgetDimension, value: number): string {
  if (dimension === "cost") return `$${Number(value.toFixed(6))}`;
  if (dimension === "seconds") return `${Number(value.toFixed(3))} s`;
  return `${Math.round(value)} tokens`;
}

/** A provider's capacity (`limits`) stayed full for longer than a caller may wait: the call was not sent. */
export class RateLimitedError extends OpenProgramError {
  readonly code = "rate_limited";
  constructor(
    /** The limits' key: `provider/model` or `provider`. */
    readonly key: string,
    /** Which limit was full: maxConcurrent, requestsPerMinute or tokensPerMinute. */
    readonly limit: string,
    readonly waitedSeconds: number,
  ) {
    super(
      `The capacity of ${key} stayed full (${limit}) for ${Number(waitedSeconds.toFixed(3))} s, the longest a call ` +
        `waits (maxWaitSeconds), so the call was not sent. Try again later, or raise "limits": { ${JSON.stringify(key)}: ` +
        "{ ... } } in openprogram.config.json.",
    );
  }
}
