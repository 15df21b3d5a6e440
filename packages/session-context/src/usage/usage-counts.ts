import type { LlmCallUsage } from "./llm-usage.js";

/** Token counts added up over some model calls. */
export interface UsageCounts {
  /** Model calls (llm nodes). */
  calls: number;
  /** Calls whose node carries no token counts (they add nothing to the tokens). */
  callsWithoutUsage: number;
  /** Every prompt token, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** The part of `inputTokens` read from the provider's cache. */
  cachedInputTokens: number;
}

/** Zero calls, zero tokens. */
export function emptyCounts(): UsageCounts {
  return { calls: 0, callsWithoutUsage: 0, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
}

/** Adds `more` into `into` (mutates and returns `into`). */
export function addCounts(into: UsageCounts, more: UsageCounts): UsageCounts {
  into.calls += more.calls;
  into.callsWithoutUsage += more.callsWithoutUsage;
  into.inputTokens += more.inputTokens;
  into.outputTokens += more.outputTokens;
  into.cachedInputTokens += more.cachedInputTokens;
  return into;
}

/** Adds one call into `into`. */
export function addCall(into: UsageCounts, call: LlmCallUsage): UsageCounts {
  into.calls += 1;
  if (!call.reported) into.callsWithoutUsage += 1;
  into.inputTokens += call.inputTokens;
  into.outputTokens += call.outputTokens;
  into.cachedInputTokens += call.cachedInputTokens;
  return into;
}
