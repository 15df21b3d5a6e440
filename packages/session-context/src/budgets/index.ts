// Budgets: what a program may spend, checked where every model call passes.
export {
  budgetOfMessage,
  BudgetExceededError,
  InvalidBudgetError,
  RateLimitedError,
  UnpricedModelError,
} from "./budget-errors.js";
export { MemoryBudgetLedger, type BudgetLedger, type LedgerReservation, type SpendLimit } from "./budget-ledger.js";
export type { BudgetDimension, BudgetLimit, BudgetScope, Budgets, ProgramBudgetLimit, Spend } from "./budget-types.js";
export { checkBudgets, dayIn } from "./check-budgets.js";
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
} from "./provider-limits.js";
export { hasBudgets, mergeBudgets, resolveBudgetConfig, type BudgetConfig } from "./budget-config.js";
export { CallBudget, spendWithin, type BudgetHold } from "./call-budget.js";
export { TurnBudget } from "./turn-budget.js";
export { describeBudgets, type BudgetStanding, type BudgetStandings } from "./budget-standing.js";
