import type { PricedUsage } from "@openprogram/session-context/usage";

/** Column titles of a usage table, after the row's own. */
export const USAGE_COLUMNS = ["CALLS", "INPUT", "CACHED", "OUTPUT", "COST (USD)"] as const;

/** The usage columns of one row: calls (and how many reported no tokens), tokens, and the cost or why not. */
export function usageCells(usage: PricedUsage): string[] {
  const calls =
    usage.callsWithoutUsage > 0 ? `${usage.calls} (${usage.callsWithoutUsage} without usage)` : String(usage.calls);
  return [
    calls,
    tokens(usage.inputTokens),
    tokens(usage.cachedInputTokens),
    tokens(usage.outputTokens),
    formatCost(usage),
  ];
}

/** A cost in dollars, or "-" with the models that have no price (the notes under the table say why). */
export function formatCost(usage: PricedUsage): string {
  if (usage.cost === null) return `- (no price: ${usage.unpricedModels.join(", ")})`;
  if (usage.cost >= 1 || usage.cost === 0) return `$${usage.cost.toFixed(2)}`;
  // Small costs to the millionth of a dollar, without trailing zeros: $0.0025.
  return `$${usage.cost.toFixed(6).replace(/0+$/, "")}`;
}

/** A one-line summary: "3 calls, 1,200 in (400 cached), 35 out, $0.0012". */
export function usageSummary(usage: PricedUsage): string {
  const without = usage.callsWithoutUsage > 0 ? ` (${usage.callsWithoutUsage} without usage)` : "";
  return (
    `${usage.calls} ${usage.calls === 1 ? "call" : "calls"}${without}, ${tokens(usage.inputTokens)} in ` +
    `(${tokens(usage.cachedInputTokens)} cached), ${tokens(usage.outputTokens)} out, ${formatCost(usage)}`
  );
}

/** 1234567 -> "1,234,567" (toLocaleString's first call loads ICU data: a tenth of the command's cold start). */
function tokens(count: number): string {
  return String(count).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}
