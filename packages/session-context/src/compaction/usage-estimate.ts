import type { ChatMessage } from "../providers/types.js";
import type { SessionNode } from "../store/types.js";
import { nodeMessages } from "./plan-compaction.js";
import { tokenUpperBound, TOKENS_PER_MESSAGE } from "./token-count.js";

/**
 * A bound on a request's tokens from what the provider reported for the
 * previous request of the same conversation (Python OpenProgram trusts the
 * provider on the prefix too): when the request reads everything the last
 * model reply read, then that reply, the request holds that reply's input and
 * output tokens plus the nodes and message added since, bounded by their
 * UTF-8 size. Null when no recorded reply fits (no usage reported, a
 * different system message, a compaction since).
 */
export function usageBound(
  reads: readonly string[],
  nodes: ReadonlyMap<string, SessionNode>,
  system: string | null,
  content: string | null,
): number | null {
  for (let index = reads.length - 1; index >= 0; index--) {
    const node = nodes.get(reads[index] as string);
    if (!node || node.role !== "llm") continue;
    const usage = node.metadata.usage as { inputTokens?: unknown; outputTokens?: unknown } | null | undefined;
    const input = usage?.inputTokens;
    const output = usage?.outputTokens;
    if (typeof input !== "number" || typeof output !== "number") return null;
    if ((node.metadata.system ?? null) !== system) return null;
    const before = node.reads;
    if (before.length !== index || before.some((id, position) => reads[position] !== id)) return null;
    const added: ChatMessage[] = [];
    for (const id of reads.slice(index + 1)) {
      const later = nodes.get(id);
      if (later) added.push(...nodeMessages(later));
    }
    if (content !== null) added.push({ role: "user", content });
    // The reply's own framing is in neither count: one message more.
    return input + output + TOKENS_PER_MESSAGE + tokenUpperBound(added);
  }
  return null;
}
