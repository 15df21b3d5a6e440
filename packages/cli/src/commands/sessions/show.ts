import {
  describeModelCalls,
  describeSession,
  nodeStatus,
  type RecordedModelCall,
  type SessionDetail,
  type SessionNode,
} from "@openprogram/session-context";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatTimestamp, writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";
import { formatModelCalls } from "./show-calls.js";

/** Flags of `openprogram sessions show`. */
export interface ShowFlags {
  json?: boolean;
  /** Also every model request: the messages sent, the reply, usage and duration. */
  calls?: boolean;
}

/**
 * `openprogram sessions show <id>`: the session's meta and its conversation
 * (the branch from the first message to the head), or with --json
 * `{ session, meta, conversation, problems }`.
 */
export async function showCommand(sessionId: string, flags: ShowFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let detail: SessionDetail;
  let calls: RecordedModelCall[] | null = null;
  try {
    const id = await requireExistingSession(sessionId);
    detail = await describeSession(id);
    if (flags.calls) calls = await describeModelCalls(id);
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, {
      session: detail.record,
      meta: detail.meta,
      conversation: detail.conversation,
      problems: detail.problems,
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
    "",
    `conversation (${detail.conversation.length} ${detail.conversation.length === 1 ? "message" : "messages"}):`,
  ];
  if (detail.conversation.length === 0) lines.push("  (empty)");
  for (const node of detail.conversation) lines.push(...conversationEntry(node));
  if (detail.problems.length > 0) {
    lines.push("", "unreadable node files:");
    for (const problem of detail.problems) lines.push(`  ${problem.path}: ${problem.message}`);
  }
  if (calls) lines.push("", formatModelCalls(calls));
  writeLine(io.stdout, lines.join("\n"));
  return EXIT_CODES.ok;
}

function conversationEntry(node: SessionNode): string[] {
  const speaker =
    node.role === "user"
      ? "user"
      : node.role === "llm"
        ? `model${node.name ? ` (${node.name})` : ""}`
        : `call ${node.name}${statusSuffix(node)}`;
  const body =
    node.role === "code" ? `input: ${text(node.input)}\noutput: ${text(node.output)}` : text(node.output ?? node.input);
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
