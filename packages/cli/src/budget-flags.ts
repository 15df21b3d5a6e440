import { InvalidBudgetError, type Budgets } from "@openprogram/session-context";
import { hasBudgets, mergeBudgets, resolveBudgetConfig, type LimitsConfig } from "@openprogram/session-context/budgets";
import { BUDGET_FLAGS, type BudgetFlags } from "./budget-options.js";
import type { CliIo } from "./io.js";

export type { BudgetFlags };

/**
 * The budgets of a command's turns: `"budgets"` from the configuration, the
 * flags over them; and the provider `"limits"` configured. `{}` when none is set (nothing is counted); InvalidBudgetError
 * for a flag that is not a number (exit 2).
 */
export function budgetsOption(flags: BudgetFlags, io: CliIo): { budgets?: Budgets; limits?: LimitsConfig } {
  const fromFlags: Budgets = {};
  for (const [flag, key, scope, limit] of BUDGET_FLAGS) {
    const text = flags[key];
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === "" || !Number.isFinite(value) || value < 0)
      throw new InvalidBudgetError(`${flag.split(" ")[0]} needs a number, 0 or more, not ${JSON.stringify(text)}.`);
    fromFlags[scope] = { ...fromFlags[scope], [limit]: value };
  }
  const config = resolveBudgetConfig(io.env, io.cwd);
  const budgets = mergeBudgets(config.budgets, fromFlags);
  return { ...(hasBudgets(budgets) ? { budgets } : {}), ...(config.limits ? { limits: config.limits } : {}) };
}
