import type { AttachmentStore } from "../content/attachment-store.js";
import type { ContentPart } from "../content/content-blocks.js";
import type { ChatMessage } from "../providers/types.js";
import { walkBranch } from "../store/walk-branch.js";
import { activeSummary } from "../compaction/summary-node.js";
import { substituteSummary } from "../compaction/substitute-summary.js";
import { isUnfinished } from "../store/node-status.js";
import type { SessionNode } from "../store/types.js";
import { PromptMessages } from "./prompt-messages.js";
import { toolCallIdOf, toolNodesOf } from "./tool-nodes.js";

/** What a prompt is rendered from. */
export interface PromptSource {
  nodes: ReadonlyMap<string, SessionNode>;
  /** The same nodes in seq order. */
  ordered: readonly SessionNode[];
  /** The call exec runs in (its doc is the system message), or null at top level. */
  callId: string | null;
  /** The session head, used when there is no call. */
  headId: string | null;
  /** The session's active summary (`_last_summary_id` in meta.json), if any. */
  summaryId?: string | null;
  system: string | null;
  /** The new user message; null when the history already ends with it (a chat turn). */
  content: string | null;
  /** The new message as content blocks (`content` is then their text). */
  contentParts?: ContentPart[] | null;
  /** Where recorded content blocks are read back from; absent: earlier execs' blocks render as their text. */
  attachments?: AttachmentStore | null;
  /**
   * While a resumed turn replays: the call's earlier calls in program order,
   * recorded ones it reused first (they hang under the call it continues).
   * Calls under `callId` that are not listed follow, in seq order.
   */
  earlier?: readonly string[] | null;
}

/** The rendered request and the ids it read. */
export interface RenderedPrompt {
  messages: ChatMessage[];
  reads: string[];
}

/**
 * Renders the request for `exec`, deterministically: the same nodes give the
 * same messages whatever process, entry point or clock renders them; node ids
 * and times never appear.
 *
 * 1. system: the calling function's doc, exactly;
 * 2. the session's conversation branch before the current top-level call:
 *    user and llm turns, and top-level calls as a call/result pair (unless
 *    their doc says expose "hidden"); when the active summary covers a
 *    segment lying wholly on that branch, the summary stands in its place;
 * 3. this call's own earlier subcalls, exec exchanges and questions;
 *    after a reply that asked for tools, the tools' executions (Python
 *    OpenProgram's rule: calls inside the reply, then one result each);
 * 4. `content`.
 */
export function renderPrompt(source: PromptSource): RenderedPrompt {
  const builder = new PromptMessages(source.attachments ?? null);
  const reads: string[] = [];
  const tools = new ToolChildren(source.ordered);
  const add = (node: SessionNode): void => {
    if (!builder.add(node)) return;
    reads.push(node.id);
    // The tools a reply asked for follow it, in the model's order (their caller is the reply, not the call).
    // Every reply is looked at, not only ours that list metadata.tool_calls: Python OpenProgram's chat
    // keeps that list in a JSON string (metadata.extra), and its renderer finds the calls by caller.
    if (node.role === "llm")
      for (const result of tools.of(node, source.nodes)) if (builder.add(result)) reads.push(result.id);
  };
  if (source.system) builder.messages.push({ role: "system", content: source.system });
  for (const node of conversationBefore(source)) add(node);
  if (source.callId !== null) {
    const listed = new Set(source.earlier ?? []);
    for (const id of source.earlier ?? []) {
      const node = source.nodes.get(id);
      if (node && !isUnfinished(node)) add(node);
    }
    for (const node of source.ordered) {
      if (node.caller === source.callId && !listed.has(node.id) && !isUnfinished(node)) add(node);
    }
  }
  if (source.content !== null)
    builder.messages.push(
      source.contentParts
        ? { role: "user", content: source.content, parts: source.contentParts }
        : { role: "user", content: source.content },
    );
  return { messages: builder.messages, reads };
}

/** The finished tool executions under each reply, indexed on the first reply rendered (one pass over the nodes). */
class ToolChildren {
  private byCaller: Map<string, SessionNode[]> | null = null;

  constructor(private readonly ordered: readonly SessionNode[]) {}

  of(llm: SessionNode, nodes: ReadonlyMap<string, SessionNode>): SessionNode[] {
    if (!this.byCaller) {
      this.byCaller = new Map();
      for (const node of this.ordered) {
        if (node.role !== "code" || toolCallIdOf(node) === null || node.caller === "") continue;
        let list = this.byCaller.get(node.caller);
        if (!list) this.byCaller.set(node.caller, (list = []));
        list.push(node);
      }
    }
    const children = this.byCaller.get(llm.id);
    if (!children) return [];
    return toolNodesOf(llm, children).filter((node) => !isUnfinished(node) && !isTakenOver(node, nodes));
  }
}

/** The conversation branch visible to a call: everything before its top-level ancestor. */
function conversationBefore(source: PromptSource): SessionNode[] {
  const start = conversationTip(source);
  const branch = substituteSummary(walkBranch(source.nodes, start), activeSummary(source.nodes, source.summaryId));
  // A call a resumed turn took over is replaced by its continuation: the prompt is the uninterrupted run's.
  return branch.filter((node) => !isUnfinished(node) && !isTakenOver(node, source.nodes));
}

/** Where the conversation a prompt shows ends: the head, or the predecessor of the call's top-level ancestor. */
export function conversationTip(source: Pick<PromptSource, "nodes" | "callId" | "headId">): string | null {
  if (source.callId === null) return source.headId;
  const top = topLevelAncestor(source.nodes, source.callId);
  return top ? top.predecessor : null;
}

function isTakenOver(node: SessionNode, nodes: ReadonlyMap<string, SessionNode>): boolean {
  const claim = node.metadata.resumed_by as { node_id?: unknown } | null | undefined;
  return typeof claim?.node_id === "string" && nodes.has(claim.node_id);
}

/** The top-level call a node runs under (the node itself when it is top level). */
function topLevelAncestor(nodes: ReadonlyMap<string, SessionNode>, nodeId: string): SessionNode | null {
  const seen = new Set<string>();
  let node = nodes.get(nodeId) ?? null;
  while (node && node.caller !== "" && !seen.has(node.id)) {
    seen.add(node.id);
    node = nodes.get(node.caller) ?? null;
  }
  return node;
}
