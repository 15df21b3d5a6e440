// @openprogram/session-context/budgets: what a program may spend in tokens, cost and wall
// time (exec, turn, session, program per day), and the providers' capacity shared by a
// process: what the CLI's and the dispatcher's budget settings and standings use. The
// budget errors, and the Budgets and BudgetLimit types a context takes, are in the root too.

export { budgetOfMessage } from "../budgets/budget-errors.js";
export {
  MemoryBudgetLedger,
  type BudgetLedger,
  type LedgerReservation,
  type SpendLimit,
} from "../budgets/budget-ledger.js";
export type {
  BudgetDimension,
  BudgetLimit,
  BudgetScope,
  Budgets,
  ProgramBudgetLimit,
  Spend,
} from "../budgets/budget-types.js";
export { checkBudgets, dayIn } from "../budgets/check-budgets.js";
export {
  checkLimits,
  ProviderLimits,
  sharedProviderLimits,
  type CapacityAnswer,
  type CapacityLimit,
  type CapacitySlot,
  type CapacityStore,
  type KeyCapacity,
  type LimitsConfig,
  type ProviderLimitsOptions,
} from "../budgets/provider-limits.js";
export { hasBudgets, mergeBudgets, resolveBudgetConfig, type BudgetConfig } from "../budgets/budget-config.js";
export { CallBudget, spendWithin, type BudgetHold } from "../budgets/call-budget.js";
export { TurnBudget } from "../budgets/turn-budget.js";
export { describeBudgets, type BudgetStanding, type BudgetStandings } from "../budgets/budget-standing.js";
