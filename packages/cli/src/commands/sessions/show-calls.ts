import type { ChatMessage } from "@openprogram/session-context/runtime";
import type { RecordedModelCall, RecordedToolCall } from "@openprogram/session-context/store";
import { formatDuration } from "../../output.js";

/** `sessions show <id> --calls`: every model request, what was sent and what came back. */
export function formatModelCalls(calls: readonly RecordedModelCall[]): string {
  if (calls.length === 0) return "model calls: none";
  const lines = [`model calls (${calls.length}):`];
  calls.forEach((call, index) => {
    const where = call.callerName ? `in ${call.callerName}` : "chat";
    const duration = call.durationSeconds === null ? "" : `, ${formatDuration(call.durationSeconds)}`;
    lines.push(
      "",
      `#${index + 1} ${call.model} (${call.provider ?? "unknown provider"}) ${where}: ${call.status ?? "?"}${duration}${usageText(call.usage)}`,
    );
    for (const message of call.messages) lines.push(...messageLines(message));
    lines.push("  [reply]", indent(call.reply ?? "(none)"));
    for (const toolCall of call.toolCalls) lines.push(...toolCallLines(toolCall));
    lines.push(`  ${verification(call)}`);
  });
  return lines.join("\n");
}

/** A message sent: its role and text; an assistant's tool calls and a tool result say which call. */
function messageLines(message: ChatMessage): string[] {
  const role =
    message.role === "tool" ? `tool ${message.toolName ?? "?"} ${message.toolCallId ?? ""}`.trim() : message.role;
  const lines = [`  [${role}${message.isError ? ", error" : ""}]`];
  if (message.content !== "" || !message.toolCalls?.length) lines.push(indent(message.content));
  for (const call of message.toolCalls ?? []) lines.push(`    calls ${call.name} ${call.arguments} (${call.id})`);
  return lines;
}

/** A tool the reply asked for, as it ran: its arguments and the result the model read back. */
function toolCallLines(call: RecordedToolCall): string[] {
  const duration = call.durationSeconds === null ? "" : `, ${formatDuration(call.durationSeconds)}`;
  return [
    `  [tool call ${call.name} ${call.toolCallId}: ${call.status ?? "?"}${duration}]`,
    `    arguments: ${JSON.stringify(call.arguments)}`,
    `    result: ${(typeof call.result === "string" ? call.result : JSON.stringify(call.result)).replace(/\n/g, "\n      ")}`,
  ];
}

function usageText(usage: unknown): string {
  const counts = usage as { inputTokens?: unknown; outputTokens?: unknown } | null;
  const count = (value: unknown): string => (typeof value === "number" ? String(value) : "?");
  if (typeof counts?.inputTokens !== "number" && typeof counts?.outputTokens !== "number") return "";
  return `, tokens in ${count(counts.inputTokens)} / out ${count(counts.outputTokens)}`;
}

function verification(call: RecordedModelCall): string {
  const digest = call.promptSha256 ? `sha256 ${call.promptSha256.slice(0, 12)}…` : "no request digest recorded";
  if (call.verified === true) return `${digest}: the messages above are the exact request sent`;
  if (call.verified === false)
    return `${digest}: the messages above do not give the bytes sent (a request setting not recorded, or a node changed since)`;
  return `${digest}: not checkable (no digest, an unknown provider, or tools or a response format sent beside the messages)`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `    ${line}`)
    .join("\n");
}
