import type { SessionNode } from "../store/types.js";

/**
 * One llm node's token counts on one footing, whoever wrote the node:
 * `inputTokens` is every prompt token (cache reads and writes included),
 * `cachedInputTokens` the part read from the provider's cache. `reported`
 * is false when the node carries no usage (a failed call, a scripted reply
 * without counts, a Python node without them): it still counts as a call.
 */
export interface LlmCallUsage {
  model: string;
  /** Unix seconds when the node was made. */
  createdAt: number;
  reported: boolean;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

/** Model name for llm nodes that name none (Python's chat replies leave `name` empty). */
export const UNKNOWN_MODEL = "(unknown model)";

/**
 * The usage of an llm node, or null for any other node (and for Python's
 * compaction summaries, which record no model call). Reads the counts both
 * stores write:
 * - ours (`metadata.usage` = `ReportedUsage`): OpenAI-style `inputTokens`
 *   include cached input; the Anthropic provider's exclude cache reads and
 *   writes, which are added back;
 * - Python OpenProgram's (`input_tokens` net of `cache_read`, plus `cache_create`).
 */
export function llmNodeUsage(node: SessionNode): LlmCallUsage | null {
  if (node.role !== "llm" || node.metadata.compaction === true || node.name.startsWith("context/")) return null;
  const usage = node.metadata.usage;
  const base = { model: modelOf(node), createdAt: node.created_at };
  if (usage === null || typeof usage !== "object" || Array.isArray(usage))
    return { ...base, reported: false, inputTokens: 0, outputTokens: 0, cachedInputTokens: 0 };
  const counts = usage as Record<string, unknown>;
  if ("inputTokens" in counts || "outputTokens" in counts) {
    const cached = count(counts.cachedInputTokens);
    const separate = node.metadata.provider === "anthropic";
    return {
      ...base,
      reported: true,
      inputTokens: count(counts.inputTokens) + (separate ? cached + count(counts.cacheWriteInputTokens) : 0),
      outputTokens: count(counts.outputTokens),
      cachedInputTokens: cached,
    };
  }
  const cached = count(counts.cache_read);
  return {
    ...base,
    reported: "input_tokens" in counts || "output_tokens" in counts,
    inputTokens: count(counts.input_tokens) + cached + count(counts.cache_create),
    outputTokens: count(counts.output_tokens),
    cachedInputTokens: cached,
  };
}

/** The model a node's call was made with: the one requested (what a price table names), else what answered. */
function modelOf(node: SessionNode): string {
  if (node.name !== "") return node.name;
  const answered = node.metadata.response_model ?? node.metadata.model;
  return typeof answered === "string" && answered !== "" ? answered : UNKNOWN_MODEL;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
