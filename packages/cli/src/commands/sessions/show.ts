import type { SessionNode } from "@openprogram/session-context";
import {
  describeModelCalls,
  describeSession,
  failureLines,
  latestFailure,
  nodeFailure,
  nodeStatus,
  type RecordedModelCall,
  type SessionDetail,
} from "@openprogram/session-context/store";
import { describeSessionUsage, type SessionUsage } from "@openprogram/session-context/usage";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatTimestamp, writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";
import { formatModelCalls } from "./show-calls.js";
import { usageSummary } from "./usage-format.js";

/** Flags of `openprogram sessions show`. */
export interface ShowFlags {
  json?: boolean;
  /** Also every model request: the messages sent, the reply, usage and duration. */
  calls?: boolean;
  /** Only the last n messages of the conversation. */
  last?: number;
  /** The whole conversation (the default with --json). */
  all?: boolean;
}

/** Messages `sessions show` prints unless told otherwise: a huge session must not flood the terminal. */
export const SHOW_LAST_MESSAGES = 200;

/**
 * `openprogram sessions show <id>`: the session's meta, its conversation
 * (the branch from the first message to the head) and its token usage per
 * turn and in total, or with --json `{ session, meta, conversation, problems, usage }`.
 */
export async function showCommand(sessionId: string, flags: ShowFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let detail: SessionDetail;
  let calls: RecordedModelCall[] | null = null;
  let usage: SessionUsage;
  try {
    const id = await requireExistingSession(sessionId);
    detail = await describeSession(id);
    usage = await describeSessionUsage(id);
    if (flags.calls) calls = await describeModelCalls(id);
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  // A page of the conversation, its newest messages: --last n, else all for --json and the last 200 on a terminal.
  const last = flags.all ? undefined : (flags.last ?? (flags.json ? undefined : SHOW_LAST_MESSAGES));
  const shown = last === undefined ? detail.conversation : detail.conversation.slice(-last);
  const omitted = detail.conversation.length - shown.length;
  if (flags.json) {
    writeJson(io.stdout, {
      session: detail.record,
      meta: detail.meta,
      conversation: shown,
      ...(omitted > 0 ? { omitted_messages: omitted } : {}),
      problems: detail.problems,
      usage,
      ...(calls ? { calls } : {}),
    });
    return EXIT_CODES.ok;
  }
  const { record, meta } = detail;
  const lines = [
    `session ${record.id}${record.title ? `: ${record.title}` : ""}`,
    `  status: ${String(record.status)}   source: ${record.source || "-"}   agent: ${record.agent_id || meta.agent_id || "-"}`,
    `  created: ${formatTimestamp(record.created_at)} UTC   updated: ${formatTimestamp(record.updated_at)} UTC`,
    `  head: ${meta.head_id ?? "(none)"}   nodes: ${detail.nodes.length}`,
    ...failedLines(detail.nodes, io.cwd),
    "",
    `conversation (${detail.conversation.length} ${detail.conversation.length === 1 ? "message" : "messages"}):`,
  ];
  if (detail.conversation.length === 0) lines.push("  (empty)");
  if (omitted > 0)
    lines.push(`  (${omitted} earlier ${omitted === 1 ? "message" : "messages"} not shown: --last <n> or --all)`);
  for (const node of shown) lines.push(...conversationEntry(node, io.cwd));
  if (detail.problems.length > 0) {
    lines.push("", "unreadable node files:");
    for (const problem of detail.problems) lines.push(`  ${problem.path}: ${problem.message}`);
  }
  lines.push("", ...usageLines(usage));
  if (calls) lines.push("", formatModelCalls(calls));
  writeLine(io.stdout, lines.join("\n"));
  return EXIT_CODES.ok;
}

/** The session's usage in total, then per turn, then why any cost is missing. */
function usageLines(usage: SessionUsage): string[] {
  if (usage.total.calls === 0) return ["usage: no model calls"];
  const lines = [`usage: ${usageSummary(usage.total)}`];
  for (const turn of usage.turns)
    lines.push(`  ${formatTimestamp(turn.startedAt)}  ${turn.label} (${turn.turn}): ${usageSummary(turn)}`);
  for (const note of usage.notes) lines.push(`  note: ${note}`);
  return lines;
}

/** The session header's line saying why its last turn failed, and where. */
function failedLines(nodes: readonly SessionNode[], cwd: string): string[] {
  const failed = latestFailure(nodes);
  if (!failed) return [];
  const [first, ...frames] = failureLines(failed.failure, { relativeTo: cwd });
  return [`  failed in ${failed.node.name}: ${first}`, ...frames.map((line) => `  ${line}`)];
}

function conversationEntry(node: SessionNode, cwd: string): string[] {
  const speaker =
    node.role === "user"
      ? "user"
      : node.role === "llm"
        ? `model${node.name ? ` (${node.name})` : ""}`
        : `call ${node.name}${statusSuffix(node)}`;
  const failure = nodeFailure(node);
  const outcome = failure ? failureLines(failure, { relativeTo: cwd }).join("\n") : `output: ${text(node.output)}`;
  const body = node.role === "code" ? `input: ${text(node.input)}\n${outcome}` : text(node.output ?? node.input);
  return [`${speaker}:`, ...body.split("\n").map((line) => `  ${line}`)];
}

function statusSuffix(node: SessionNode): string {
  const status = nodeStatus(node);
  return status === undefined ? "" : ` [${status}]`;
}

function text(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return JSON.stringify(value, null, 2);
}
