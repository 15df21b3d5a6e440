import type { ChatMessage } from "../providers/types.js";
import { PromptMessages } from "../prompt/prompt-messages.js";
import { isUnfinished } from "../store/node-status.js";
import { walkBranch } from "../store/walk-branch.js";
import type { SessionNode } from "../store/types.js";
import { substituteSummary } from "./substitute-summary.js";
import { coversIdsOf, isSummaryNode } from "./summary-node.js";

/** What one compaction will summarise and keep. */
export interface CompactionPlan {
  /** The rendered view of the branch (active summary first when it applies), oldest first. */
  view: readonly SessionNode[];
  /** The head of the view the new summary replaces (the previous summary first, when it applies). */
  covered: readonly SessionNode[];
  /** The turns kept verbatim. */
  kept: readonly SessionNode[];
  /** The new summary's `covers_ids`: real conversation nodes, never a summary (an old one contributes its own). */
  coversIds: string[];
  /** The new summary's predecessor: the first covered node's (the splice point). */
  predecessor: string | null;
  /** The active summary the covered part starts with, or null (its text is the previous summary). */
  previous: SessionNode | null;
  /** Tokens of the whole view and of the kept part. */
  viewTokens: number;
  keptTokens: number;
}

/**
 * Picks the cut: the kept tail is the most recent turns whose tokens fit
 * `keepRecentTokens`, starting at a turn boundary (a top-level user message
 * or top-level call), so the model never sees an answer without its
 * question; at least the last turn is kept. Everything before it is covered,
 * the active summary included. Null when there is nothing new to summarise.
 */
export function planCompaction(options: {
  nodes: ReadonlyMap<string, SessionNode>;
  /** The branch tip whose history is compacted. */
  tipId: string | null;
  summary: SessionNode | null;
  keepRecentTokens: number;
  countTokens: (messages: readonly ChatMessage[]) => number;
}): CompactionPlan | null {
  const view = substituteSummary(walkBranch(options.nodes, options.tipId), options.summary);
  const tokens = view.map((node) => options.countTokens(nodeMessages(node)));
  const starts: number[] = [];
  for (let index = 1; index < view.length; index++) {
    if (startsTurn(view[index] as SessionNode)) starts.push(index);
  }
  let cut = -1;
  let tail = 0;
  let position = view.length;
  for (let k = starts.length - 1; k >= 0; k--) {
    const start = starts[k] as number;
    for (let index = start; index < position; index++) tail += tokens[index] as number;
    position = start;
    if (cut !== -1 && tail > options.keepRecentTokens) break;
    cut = start;
  }
  if (cut === -1) return null;
  const covered = view.slice(0, cut);
  const previous = covered[0] && options.summary && covered[0].id === options.summary.id ? covered[0] : null;
  if (covered.length === (previous ? 1 : 0)) return null;
  const coversIds = new Set<string>();
  for (const node of covered)
    for (const id of (isSummaryNode(node) ? coversIdsOf(node) : null) ?? [node.id]) coversIds.add(id);
  const sum = (from: number, to: number): number => tokens.slice(from, to).reduce((a, b) => a + b, 0);
  return {
    view,
    covered,
    kept: view.slice(cut),
    coversIds: [...coversIds],
    predecessor: (covered[0] as SessionNode).predecessor,
    previous,
    viewTokens: sum(0, view.length),
    keptTokens: sum(cut, view.length),
  };
}

/** A top-level user message (not a question) or top-level call: where a turn begins. */
function startsTurn(node: SessionNode): boolean {
  if (node.caller !== "" || isSummaryNode(node)) return false;
  return (node.role === "user" && node.name !== "ask_user") || node.role === "code";
}

/** The messages one node renders to (nothing for an unfinished node, as in a prompt). */
export function nodeMessages(node: SessionNode): ChatMessage[] {
  const builder = new PromptMessages();
  if (!isUnfinished(node)) builder.add(node);
  return builder.messages;
}
