import type { SessionNode } from "../store/types.js";
import { llmNodeUsage } from "./llm-usage.js";
import { addCall, emptyCounts, type UsageCounts } from "./usage-counts.js";

/**
 * A session's usage by UTC day and model: the unit a per-session total keeps,
 * small (days x models) and enough to add up by model, by day or by session
 * and to price, with `--since` at day granularity.
 */
export interface UsageBucket extends UsageCounts {
  /** UTC day of the calls, YYYY-MM-DD. */
  day: string;
  model: string;
}

/** The usage buckets of a session's nodes, sorted by day then model. */
export function usageBuckets(nodes: Iterable<SessionNode>): UsageBucket[] {
  const buckets = new Map<string, UsageBucket>();
  for (const node of nodes) {
    const call = llmNodeUsage(node);
    if (!call) continue;
    const day = utcDay(call.createdAt);
    const key = `${day}\u0000${call.model}`;
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = { day, model: call.model, ...emptyCounts() }));
    addCall(bucket, call);
  }
  return sortBuckets([...buckets.values()]);
}

/** Sorts buckets by day then model (in place; returns them). */
export function sortBuckets(buckets: UsageBucket[]): UsageBucket[] {
  return buckets.sort((a, b) =>
    a.day === b.day ? (a.model < b.model ? -1 : a.model > b.model ? 1 : 0) : a.day < b.day ? -1 : 1,
  );
}

/** The UTC day (YYYY-MM-DD) of a time in Unix seconds. */
export function utcDay(seconds: number): string {
  return new Date(Number.isFinite(seconds) ? seconds * 1000 : 0).toISOString().slice(0, 10);
}
