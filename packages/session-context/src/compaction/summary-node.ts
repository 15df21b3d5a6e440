import type { SessionMeta, SessionNode } from "../store/types.js";

/** The name of a compaction summary node, as Python OpenProgram writes it. */
export const SUMMARY_NODE_NAME = "context/summary";

/** Every summary node's output starts with this line; the summary's text follows. */
export const SUMMARY_OUTPUT_PREFIX = "[Previous conversation summary]\n";

/** meta.json keys Python OpenProgram keeps the active summary in (top level of meta.json). */
export const SUMMARY_META_KEYS = {
  id: "_last_summary_id",
  text: "_last_summary_text",
  compactedAt: "_last_compacted_at",
} as const;

/** The conversation ids a summary node replaces (its `metadata.covers_ids`), or null for any other node. */
export function coversIdsOf(node: SessionNode): string[] | null {
  const raw = node.metadata.covers_ids;
  if (!Array.isArray(raw) || raw.length === 0) return null;
  return raw.map(String);
}

/** True for a compaction summary node (Python's shape: `metadata.covers_ids`, name `context/summary`). */
export function isSummaryNode(node: SessionNode): boolean {
  return coversIdsOf(node) !== null || (node.role === "llm" && node.name === SUMMARY_NODE_NAME);
}

/** The id meta.json names as the active summary, or null. */
export function activeSummaryId(meta: Pick<SessionMeta, string>): string | null {
  const id = meta[SUMMARY_META_KEYS.id];
  return typeof id === "string" && id !== "" ? id : null;
}

/** The session's active summary node: the one `_last_summary_id` names, when it exists and covers something. */
export function activeSummary(
  nodes: ReadonlyMap<string, SessionNode>,
  summaryId: string | null | undefined,
): SessionNode | null {
  if (!summaryId) return null;
  const node = nodes.get(summaryId);
  return node && coversIdsOf(node) !== null ? node : null;
}

/** The summary's text, without the `[Previous conversation summary]` line. */
export function summaryText(node: SessionNode): string {
  const output = typeof node.output === "string" ? node.output : "";
  return output.startsWith(SUMMARY_OUTPUT_PREFIX) ? output.slice(SUMMARY_OUTPUT_PREFIX.length) : output;
}
