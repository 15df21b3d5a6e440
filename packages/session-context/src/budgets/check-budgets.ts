import { InvalidBudgetError } from "./budget-errors.js";
import type { BudgetLimit, Budgets } from "./budget-types.js";

const DIMENSIONS: Record<string, readonly string[]> = {
  exec: ["tokens", "cost", "seconds"],
  turn: ["tokens", "cost", "seconds"],
  session: ["tokens", "cost", "seconds"],
  program: ["tokens", "cost", "seconds", "timeZone", "name"],
};

/** Budgets as given in code or configuration, checked: unknown scopes or limits and non-numbers are refused, not ignored. */
export function checkBudgets(budgets: unknown, where = "budgets"): Budgets {
  if (budgets === undefined || budgets === null) return {};
  if (typeof budgets !== "object" || Array.isArray(budgets))
    throw new InvalidBudgetError(`${where} must be an object like { "turn": { "tokens": 20000 } }.`);
  for (const [scope, limit] of Object.entries(budgets as Record<string, unknown>)) {
    if (scope === "ledger" || scope === "prices") continue;
    const allowed = DIMENSIONS[scope];
    if (!allowed)
      throw new InvalidBudgetError(
        `${where}.${scope} is not a budget scope; the scopes are ${Object.keys(DIMENSIONS).join(", ")}.`,
      );
    if (limit === undefined) continue;
    checkLimit(limit, `${where}.${scope}`, allowed);
  }
  const program = (budgets as Budgets).program;
  if (program?.timeZone !== undefined) dayIn(program.timeZone, new Date(), `${where}.program.timeZone`);
  return budgets;
}

/** One scope's limit, checked (also `exec(..., { budget })`). */
export function checkLimit(limit: unknown, where: string, allowed: readonly string[] = DIMENSIONS.exec!): BudgetLimit {
  if (limit === null || typeof limit !== "object" || Array.isArray(limit))
    throw new InvalidBudgetError(`${where} must be an object of limits (${allowed.join(", ")}).`);
  for (const [key, value] of Object.entries(limit as Record<string, unknown>)) {
    if (!allowed.includes(key))
      throw new InvalidBudgetError(`${where}.${key} is not a limit here; use ${allowed.join(", ")}.`);
    if (key === "timeZone" || key === "name") {
      if (typeof value !== "string" || value === "") throw new InvalidBudgetError(`${where}.${key} must be a string.`);
      continue;
    }
    if (value !== undefined && (typeof value !== "number" || !Number.isFinite(value) || value < 0))
      throw new InvalidBudgetError(`${where}.${key} must be a number, 0 or more; it is ${JSON.stringify(value)}.`);
  }
  return limit;
}

/** Formatters by time zone (making one costs tens of microseconds; a model call asks for the day each time). */
const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The calendar day (YYYY-MM-DD) `when` falls on in a time zone. */
export function dayIn(timeZone: string, when: Date, where = "timeZone"): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    try {
      format = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    } catch {
      throw new InvalidBudgetError(
        `${where} ${JSON.stringify(timeZone)} is not a time zone (use an IANA name, like "Europe/Oslo").`,
      );
    }
    dayFormats.set(timeZone, format);
  }
  return format.format(when);
}
