// @openprogram/session-context/usage: token usage, wall time and cost, across a store or in
// one session, and the price table cost comes from (`openprogram sessions usage` and
// `sessions show`, the dispatcher's pages and its budgets).

export { recordedSeconds, wallTimeAcrossStore, type StoreWallTime } from "../usage/wall-time.js";
export {
  usageAcrossStore,
  type StoreUsage,
  type StoreUsageOptions,
  type UsageGrouping,
  type UsageRow,
} from "../usage/store-usage.js";
export { describeSessionUsage, type SessionUsage, type TurnUsage } from "../usage/session-usage.js";
export { llmNodeUsage, UNKNOWN_MODEL, type LlmCallUsage } from "../usage/llm-usage.js";
export type { PricedUsage } from "../usage/priced-usage.js";
export type { UsageCounts } from "../usage/usage-counts.js";
export {
  costOf,
  PRICES_VARIABLE,
  priceFor,
  resolvePriceTable,
  type ModelPrice,
  type PriceTable,
} from "../usage/price-table.js";
export { USAGE_TOTAL_FILE } from "../store/usage-total.js";
