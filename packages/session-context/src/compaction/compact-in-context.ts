import type { CompactionReason } from "../context/events.js";
import type { CompactionScope } from "./compaction-scope.js";
import { randomHex } from "../ids.js";
import { nowSeconds } from "../time/now-seconds.js";
import type { ChatMessage, ModelProvider } from "../providers/types.js";
import { storeInternals } from "../store/internal.js";
import type { SessionNode } from "../store/types.js";
import { resolveCompactionSettings, type CompactionSettings } from "./compaction-settings.js";
import { nodeMessages, planCompaction, type CompactionPlan } from "./plan-compaction.js";
import {
  activeSummary,
  activeSummaryId,
  SUMMARY_META_KEYS,
  SUMMARY_NODE_NAME,
  SUMMARY_OUTPUT_PREFIX,
  summaryText,
} from "./summary-node.js";
import { SUMMARIZE_CONVERSATION_DOC, writeSummary } from "./summarizer.js";
import { countChatTokensIfLoaded, loadTokenizer, tokenizerFor } from "./token-count.js";

/** What a compaction did. */
export interface CompactionResult {
  sessionId: string;
  /** The new summary node's id, or null when there was nothing to summarise. */
  summaryId: string | null;
  /** Conversation nodes the active summary covers now, and nodes kept verbatim after it. */
  covered: number;
  kept: number;
  /** Tokens of the rendered history before and after. */
  tokensBefore: number;
  tokensAfter: number;
  reason: CompactionReason;
}

/** The model that writes a summary, and the settings of the runtime it belongs to. */
export interface SummaryModel {
  provider: ModelProvider;
  model: string;
  compaction?: CompactionSettings | undefined;
  temperature?: number | undefined;
}

/** Options of one compaction inside a context. */
export interface CompactInContextOptions {
  summarizer: SummaryModel;
  reason: CompactionReason;
  /** The branch tip whose history is compacted; default the head. */
  tipId?: string | null;
  keepRecentTokens?: number;
}

/**
 * One compaction in the current turn: plan the cut, have the model write the
 * summary (fed the previous summary when the active one is covered), append
 * the summary node, move `_last_summary_*` in meta.json. Emits
 * `compaction` events started, then finished or failed.
 */
export async function compactInContext(
  context: CompactionScope,
  options: CompactInContextOptions,
): Promise<CompactionResult> {
  const { db, sessionId } = context;
  const { summarizer: runtime, reason } = options;
  const settings = resolveCompactionSettings(runtime, {
    ...(options.keepRecentTokens !== undefined ? { keepRecentTokens: options.keepRecentTokens } : {}),
  });
  context.emit({ type: "compaction", sessionId, phase: "started", reason });
  try {
    await loadTokenizer(tokenizerFor(runtime.model));
    const count = (messages: readonly ChatMessage[]): number => countChatTokensIfLoaded(messages, runtime.model) ?? 0;
    const internals = storeInternals(db);
    const meta = internals.readMetaSync(sessionId);
    const nodes = internals.nodeMapSync(sessionId);
    const plan = planCompaction({
      nodes,
      tipId: options.tipId === undefined ? meta.head_id : options.tipId,
      summary: activeSummary(nodes, activeSummaryId(meta)),
      keepRecentTokens: settings.keepRecentTokens,
      countTokens: count,
    });
    if (!plan) {
      const result: CompactionResult = {
        sessionId,
        summaryId: null,
        covered: 0,
        kept: 0,
        tokensBefore: 0,
        tokensAfter: 0,
        reason,
      };
      context.emit({ type: "compaction", sessionId, phase: "finished", ...eventFields(result) });
      return result;
    }
    // The next compaction is given `_last_summary_text` (Python's rule), else the summary node's own text.
    const lastText = meta[SUMMARY_META_KEYS.text];
    const previousSummary = plan.previous
      ? typeof lastText === "string" && lastText !== ""
        ? lastText
        : summaryText(plan.previous)
      : null;
    const text = await writeSummary(
      {
        provider: runtime.provider,
        model: runtime.model,
        maxTokens: settings.maxSummaryTokens,
        temperature: runtime.temperature,
        signal: context.signal,
      },
      transcriptPieces(plan, count, pieceBudget(settings, count, previousSummary)),
      previousSummary,
    );
    const summary = await appendSummary(context, plan, text || "(The summariser returned no text.)");
    const summaryTokens = count(nodeMessages(summary));
    const result: CompactionResult = {
      sessionId,
      summaryId: summary.id,
      covered: plan.coversIds.length,
      kept: plan.kept.length,
      tokensBefore: plan.viewTokens,
      tokensAfter: summaryTokens + plan.keptTokens,
      reason,
    };
    context.emit({ type: "compaction", sessionId, phase: "finished", ...eventFields(result) });
    return result;
  } catch (error) {
    context.emit({
      type: "compaction",
      sessionId,
      phase: "failed",
      reason,
      error: error instanceof Error ? error.message : String(error),
    });
    throw error;
  }
}

/** Appends the summary node (Python's shape) and makes it the active summary in meta.json. */
async function appendSummary(context: CompactionScope, plan: CompactionPlan, text: string): Promise<SessionNode> {
  const node = await context.writer.append({
    id: `summary_${randomHex(10)}`,
    role: "llm",
    name: SUMMARY_NODE_NAME,
    input: null,
    output: `${SUMMARY_OUTPUT_PREFIX}${text}`,
    caller: "",
    predecessor: plan.predecessor,
    reads: [],
    metadata: { type: "compactionSummary", source: "compaction", compaction: true, covers_ids: plan.coversIds },
    createdAt: summaryCreatedAt(plan),
  });
  await storeInternals(context.db).writeMetaFields(context.sessionId, {
    [SUMMARY_META_KEYS.id]: node.id,
    [SUMMARY_META_KEYS.text]: text,
    [SUMMARY_META_KEYS.compactedAt]: nowSeconds(),
  });
  return node;
}

/**
 * Python dates a summary one microsecond before the first node of the view it
 * covers (the previous summary, on a re-compaction), so reading by time puts
 * the recap where its range began; a node without a time falls back to now.
 */
export function summaryCreatedAt(plan: Pick<CompactionPlan, "covered">): number {
  const first = plan.covered[0]?.created_at;
  return (typeof first === "number" && first !== 0 ? first : nowSeconds()) - 1e-6;
}

/** The summariser's input budget per request: most of the window, less its instructions, the summary so far and its reply. */
function pieceBudget(
  settings: ReturnType<typeof resolveCompactionSettings>,
  count: (messages: readonly ChatMessage[]) => number,
  previousSummary: string | null,
): number {
  const instructions = count([{ role: "system", content: SUMMARIZE_CONVERSATION_DOC }]);
  const carried = Math.max(
    settings.maxSummaryTokens,
    previousSummary ? count([{ role: "user", content: previousSummary }]) : 0,
  );
  return Math.max(32, settings.threshold - instructions - carried - settings.maxSummaryTokens - 32);
}

/** The covered turns as transcript pieces, each within `budget` tokens (a single longer message is clipped). */
function transcriptPieces(
  plan: CompactionPlan,
  count: (messages: readonly ChatMessage[]) => number,
  budget: number,
): string[] {
  const pieces: string[] = [];
  let lines: string[] = [];
  let used = 0;
  for (const node of plan.covered) {
    if (node === plan.previous) continue;
    for (const message of nodeMessages(node)) {
      let line = `${message.role === "assistant" ? "Assistant" : "User"}: ${message.content}`;
      let tokens = count([{ role: "user", content: line }]);
      if (tokens > budget) {
        line = `${line.slice(0, Math.floor((line.length * budget * 0.9) / tokens))} […]`;
        tokens = budget;
      }
      if (used + tokens > budget && lines.length > 0) {
        pieces.push(lines.join("\n\n"));
        lines = [];
        used = 0;
      }
      lines.push(line);
      used += tokens;
    }
  }
  if (lines.length > 0) pieces.push(lines.join("\n\n"));
  return pieces.length > 0 ? pieces : ["(no messages)"];
}

function eventFields(result: CompactionResult): {
  reason: CompactionReason;
  summaryId: string | null;
  covered: number;
  kept: number;
  tokensBefore: number;
  tokensAfter: number;
} {
  const { reason, summaryId, covered, kept, tokensBefore, tokensAfter } = result;
  return { reason, summaryId, covered, kept, tokensBefore, tokensAfter };
}
