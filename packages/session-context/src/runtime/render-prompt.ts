import { canonicalJson } from "../json/canonical.js";
import type { ChatMessage } from "../providers/types.js";
import { walkBranch } from "../store/session-db.js";
import { activeSummary } from "../compaction/summary-node.js";
import { substituteSummary } from "../compaction/substitute-summary.js";
import { isUnfinished, nodeStatus } from "../store/node-status.js";
import type { SessionNode } from "../store/types.js";

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
 * 4. `content`.
 */
export function renderPrompt(source: PromptSource): RenderedPrompt {
  const messages: ChatMessage[] = [];
  const reads: string[] = [];
  if (source.system) messages.push({ role: "system", content: source.system });
  for (const node of conversationBefore(source)) {
    if (renderNode(node, messages)) reads.push(node.id);
  }
  if (source.callId !== null) {
    const listed = new Set(source.earlier ?? []);
    for (const id of source.earlier ?? []) {
      const node = source.nodes.get(id);
      if (node && !isUnfinished(node) && renderNode(node, messages)) reads.push(node.id);
    }
    for (const node of source.ordered) {
      if (node.caller === source.callId && !listed.has(node.id) && !isUnfinished(node) && renderNode(node, messages))
        reads.push(node.id);
    }
  }
  if (source.content !== null) messages.push({ role: "user", content: source.content });
  return { messages, reads };
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

/** Appends the messages for one node; returns false when the node renders to nothing. (Also how a recorded request is shown again: recorded-calls.ts.) */
export function renderNode(node: SessionNode, messages: ChatMessage[]): boolean {
  if (node.role === "user") {
    if (node.name === "ask_user") return renderQuestion(node, messages);
    messages.push({ role: "user", content: asText(node.output) });
    return true;
  }
  if (node.role === "llm") {
    const prompt = node.metadata.prompt_text;
    // An exec's prompt is recorded on its node; a chat reply's prompt is the user node before it.
    if (typeof prompt === "string" && prompt !== "") {
      messages.push({ role: "user", content: prompt });
    }
    messages.push({ role: "assistant", content: asText(node.output) });
    return true;
  }
  const expose = node.metadata.expose ?? "io";
  if (expose === "hidden") return false;
  if (expose !== "output")
    messages.push({ role: "user", content: `Call ${node.name} with input ${canonicalJson(node.input)}` });
  messages.push({ role: "assistant", content: callResult(node) });
  return true;
}

function callResult(node: SessionNode): string {
  const status = nodeStatus(node);
  if (node.metadata.status === undefined || status === "completed")
    return `${node.name} returned: ${asText(node.output)}`;
  if (status === "failed") {
    const error = node.metadata.error as { name?: string; message?: string } | undefined;
    return `${node.name} failed: ${error?.name ?? "Error"}: ${error?.message ?? "unknown error"}`;
  }
  return `${node.name} did not finish (${status ?? "unknown status"}).`;
}

function renderQuestion(node: SessionNode, messages: ChatMessage[]): boolean {
  const choices = Array.isArray(node.metadata.choices) ? (node.metadata.choices as unknown[]).map(String) : [];
  messages.push({
    role: "assistant",
    content: `Question for the user: ${asText(node.input)}${choices.length > 0 ? `\nChoices: ${choices.join(" | ")}` : ""}`,
  });
  messages.push({ role: "user", content: answerText(node) });
  return true;
}

function answerText(node: SessionNode): string {
  switch (nodeStatus(node)) {
    case "answered":
      return asText(node.output);
    case "declined":
      return "(The user declined to answer.)";
    case "timed_out":
      return node.metadata.used_default
        ? `(No answer in time; the default was used: ${asText(node.output)})`
        : "(No answer in time.)";
    case "cancelled":
      return "(The question was cancelled.)";
    default:
      return "(The question could not be asked.)";
  }
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return canonicalJson(value);
}
