import type { SessionNode } from "../store/types.js";
import { llmNodeUsage } from "./llm-usage.js";
import { addCall, emptyCounts } from "./usage-counts.js";
import { sortBuckets, utcDay, type UsageBucket } from "./usage-buckets.js";

/** What one node adds to its bucket: the bucket's key and the call's counts (null: not a model call). */
interface Contribution {
  key: string;
  day: string;
  model: string;
  reported: boolean;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

/**
 * A session's usage buckets kept up to date node by node, so a turn's end
 * pays for the nodes the turn wrote, not for the whole session. It holds each
 * seq's contribution and the buckets' sums; `touch(seq)` marks a seq whose
 * node changed, and `buckets(bySeq)` applies those changes (subtract the old
 * contribution, add the new). The result equals usageBuckets over the same
 * nodes: sums of whole numbers do not depend on their order, and a count that
 * is not a whole number (never written by our providers or Python's) makes
 * the next call rebuild from every node instead.
 */
export class UsageTally {
  private readonly contributions = new Map<number, Contribution>();
  private readonly sums = new Map<string, UsageBucket>();
  private readonly touched = new Set<number>();
  private exact = true;

  /** A tally of these nodes (a session's nodes in seq order, one per seq). */
  static of(nodes: Iterable<SessionNode>): UsageTally {
    const tally = new UsageTally();
    for (const node of nodes) tally.add(node.seq, node);
    return tally;
  }

  /** Marks a seq whose node was written, replaced or dropped since the last `buckets` call. */
  touch(seq: number): void {
    this.touched.add(seq);
  }

  /** False when the tally cannot be brought up to date exactly (then rebuild it with `of`). */
  get usable(): boolean {
    return this.exact;
  }

  /** The buckets after applying the touched seqs, as `bySeq` holds them now; sorted as usageBuckets sorts. */
  buckets(bySeq: ReadonlyMap<number, SessionNode>): UsageBucket[] {
    for (const seq of this.touched) {
      this.remove(seq);
      const node = bySeq.get(seq);
      if (node) this.add(seq, node);
    }
    this.touched.clear();
    return sortBuckets([...this.sums.values()].map((bucket) => ({ ...bucket })));
  }

  private add(seq: number, node: SessionNode): void {
    const call = llmNodeUsage(node);
    if (!call) return;
    if (![call.inputTokens, call.outputTokens, call.cachedInputTokens].every(Number.isSafeInteger)) this.exact = false;
    const day = utcDay(call.createdAt);
    const contribution: Contribution = {
      key: `${day}\u0000${call.model}`,
      day,
      model: call.model,
      reported: call.reported,
      inputTokens: call.inputTokens,
      outputTokens: call.outputTokens,
      cachedInputTokens: call.cachedInputTokens,
    };
    this.contributions.set(seq, contribution);
    let bucket = this.sums.get(contribution.key);
    if (!bucket) this.sums.set(contribution.key, (bucket = { day, model: call.model, ...emptyCounts() }));
    addCall(bucket, call);
  }

  private remove(seq: number): void {
    const contribution = this.contributions.get(seq);
    if (!contribution) return;
    this.contributions.delete(seq);
    const bucket = this.sums.get(contribution.key) as UsageBucket;
    bucket.calls -= 1;
    if (!contribution.reported) bucket.callsWithoutUsage -= 1;
    bucket.inputTokens -= contribution.inputTokens;
    bucket.outputTokens -= contribution.outputTokens;
    bucket.cachedInputTokens -= contribution.cachedInputTokens;
    if (bucket.calls === 0) this.sums.delete(contribution.key);
  }
}
