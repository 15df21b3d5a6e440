import { existsSync } from "node:fs";
import { canonicalJson } from "../json/canonical.js";
import { terminalText } from "../messages/terminal-text.js";
import { doctorStore, type DoctorReport } from "../store/doctor/index.js";
import { probeStore, type StoreHealth } from "../store/health.js";
import { nodeStatus } from "../store/node-status.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import type { HistoryProblem, SessionMeta, SessionNode, SessionRecord } from "../store/types.js";
import { SessionNotFoundError } from "../errors.js";
import { storeInternals } from "../store/internal.js";
import { failureLines, latestFailure, nodeFailure } from "./node-failure.js";

/** Which store to use; default `openStore()` ($OPENPROGRAM_HOME/sessions). */
export interface StoreOption {
  db?: SessionDB;
}

/** Everything there is to show about one session. */
export interface SessionDetail {
  record: SessionRecord;
  meta: SessionMeta;
  /** All nodes in seq order. */
  nodes: SessionNode[];
  /** The conversation branch from ROOT to the head. */
  conversation: SessionNode[];
  /** Node files that could not be read. */
  problems: HistoryProblem[];
}

/** One call in the call tree, with the calls and model requests it made. */
export interface CallTreeNode {
  node: SessionNode;
  children: CallTreeNode[];
}

/** Registry entry, meta, nodes, conversation and unreadable files of a session. */
export async function describeSession(sessionId: string, options: StoreOption = {}): Promise<SessionDetail> {
  const db = options.db ?? openStore();
  const record = await db.getSession(sessionId);
  if (!record) throw new SessionNotFoundError(sessionId);
  const meta = await db.readMeta(sessionId);
  const history = await db.readHistory(sessionId);
  const conversation = await db.conversationBranch(sessionId);
  return { record, meta, nodes: history.nodes, conversation, problems: history.problems };
}

/** The call DAG as a forest nested by `caller`; roots are top-level nodes (and orphans). */
export async function sessionCallTree(sessionId: string, options: StoreOption = {}): Promise<CallTreeNode[]> {
  return buildCallTree(await (options.db ?? openStore()).loadNodes(sessionId));
}

/** Nests nodes by caller, keeping seq order among siblings. */
export function buildCallTree(nodes: readonly SessionNode[]): CallTreeNode[] {
  const entries = new Map(nodes.map((node) => [node.id, { node, children: [] as CallTreeNode[] }]));
  const roots: CallTreeNode[] = [];
  for (const node of nodes) {
    const entry = entries.get(node.id) as CallTreeNode;
    const parent = node.caller === "" ? undefined : entries.get(node.caller);
    (parent ? parent.children : roots).push(entry);
  }
  return roots;
}

/** Export formats of `exportSession`. */
export type ExportFormat = "json" | "md";

/**
 * The whole session as JSON (`{ session, meta, nodes }`) or as a readable
 * Markdown transcript with the call tree, its control characters escaped
 * (terminalText: it is read with `cat` and pagers as often as rendered).
 */
export async function exportSession(
  sessionId: string,
  options: StoreOption & { format?: ExportFormat } = {},
): Promise<string> {
  const detail = await describeSession(sessionId, options);
  if ((options.format ?? "json") === "json") {
    return `${JSON.stringify({ session: detail.record, meta: detail.meta, nodes: detail.nodes, problems: detail.problems }, null, 2)}\n`;
  }
  return exportMarkdown(detail);
}

function exportMarkdown(detail: SessionDetail): string {
  const lines = [`# Session ${detail.record.id}${detail.record.title ? `: ${detail.record.title}` : ""}`, ""];
  lines.push(`- source: ${detail.record.source || "unknown"}`, `- status: ${detail.record.status}`);
  const failed = latestFailure(detail.nodes);
  if (failed) lines.push(`- failed in \`${failed.node.name}\`: ${failureLines(failed.failure)[0]}`);
  lines.push(`- created: ${isoTime(detail.record.created_at)}`, `- updated: ${isoTime(detail.record.updated_at)}`, "");
  lines.push("## Conversation", "");
  if (detail.conversation.length === 0) lines.push("_No conversation yet._", "");
  for (const node of detail.conversation) lines.push(...conversationEntry(node), "");
  lines.push("## Calls", "");
  const walk = (entries: CallTreeNode[], depth: number): void => {
    for (const { node, children } of entries) {
      const indent = "  ".repeat(depth);
      const status = nodeStatus(node) ?? "";
      lines.push(`${indent}- ${callLabel(node)}${status ? ` (${status})` : ""}`);
      const failure = nodeFailure(node);
      if (failure) lines.push(...fenced(failureLines(failure).join("\n"), "text").map((line) => `${indent}  ${line}`));
      walk(children, depth + 1);
    }
  };
  walk(buildCallTree(detail.nodes), 0);
  if (detail.problems.length > 0) {
    lines.push("", "## Unreadable node files", "");
    for (const problem of detail.problems) lines.push(`- ${problem.path}: ${problem.message}`);
  }
  return terminalText(`${lines.join("\n")}\n`);
}

/** One message of the conversation: who, then what was said; a call with its input and its result or error. */
function conversationEntry(node: SessionNode): string[] {
  if (node.role === "user") return [node.name === "ask_user" ? "**Question**" : "**User**", "", textOf(node.output)];
  if (node.role === "llm") return [`**Model (${node.name})**`, "", textOf(node.output)];
  const status = nodeStatus(node);
  const lines = [`**Call \`${node.name}\`**${status && status !== "completed" ? ` (${status})` : ""}`, ""];
  lines.push("Input:", "", ...fenced(canonicalJson(node.input ?? {}), "json"), "");
  const failure = nodeFailure(node);
  if (failure) lines.push("Error:", "", ...fenced(failureLines(failure).join("\n"), "text"));
  else if (status === "completed" || status === undefined)
    lines.push(
      "Result:",
      "",
      ...(typeof node.output === "string" ? [node.output] : fenced(textOf(node.output), "json")),
    );
  return lines;
}

/** A node as one line of the call tree: a call with its input, a question with its answer. */
function callLabel(node: SessionNode): string {
  if (node.role === "user") {
    if (node.name !== "ask_user") return "user message";
    const answer = node.output === null || node.output === undefined ? "" : ` → ${textOf(node.output)}`;
    return `ask_user: ${textOf(node.input)}${answer}`;
  }
  if (node.role === "code") return `code ${node.name}(${textOf(node.input ?? {})})`;
  return `${node.role} ${node.name}`;
}

/** A fenced block long enough that no run of backticks inside it closes it. */
function fenced(text: string, language: string): string[] {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = "`".repeat(longest + 1);
  return [`${fence}${language}`, ...text.split("\n"), fence];
}

function textOf(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return canonicalJson(value);
}

function isoTime(seconds: number): string {
  return Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : "unknown";
}

/** Whether the store can take turns: its root writable (probed with a real write) and git usable. Never throws. */
export async function checkStore(options: StoreOption = {}): Promise<StoreHealth> {
  return probeStore((options.db ?? openStore()).root);
}

/** Checks a store (or one session) and, with `fix`, repairs what it safely can; see DoctorReport. */
export async function doctorSessions(
  options: StoreOption & { sessionId?: string; fix?: boolean } = {},
): Promise<DoctorReport> {
  const db = options.db ?? openStore();
  if (options.sessionId !== undefined && !existsSync(storeInternals(db).paths(options.sessionId).dir))
    throw new SessionNotFoundError(options.sessionId);
  return doctorStore(db, {
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    fix: options.fix === true,
  });
}
