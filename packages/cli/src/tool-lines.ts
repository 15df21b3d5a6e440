import type { SessionEvent } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import { formatDuration, writeLine } from "./output.js";

/** How much of a call's arguments its line shows. */
const ARGUMENTS_WIDTH = 60;
/** How much of a failed call's error its line shows. */
const ERROR_WIDTH = 100;

/**
 * A sink that writes one line per tool call as it ends (other events pass by):
 * `tool <name> <arguments>  ok|error: <why>  <duration>`. The arguments are the
 * model's, the error what the model reads back; both clipped to one line, and
 * writeLine escapes any control character in them.
 */
export function createToolLines(stream: NodeJS.WritableStream): (event: SessionEvent) => void {
  const argumentsById = new Map<string, unknown>();
  return (event) => {
    if (event.type === "tool_call") {
      argumentsById.set(event.nodeId, event.arguments);
      return;
    }
    if (event.type !== "tool_result") return;
    const args = argumentsById.get(event.nodeId);
    argumentsById.delete(event.nodeId);
    writeLine(stream, toolLine(event.name, args, event.ok, event.error, event.durationSeconds));
  };
}

/** One call's line. */
export function toolLine(
  name: string,
  args: unknown,
  ok: boolean,
  error: string | undefined,
  durationSeconds: number,
): string {
  const shown = args === undefined ? "" : ` ${clipLine(JSON.stringify(args) ?? "", ARGUMENTS_WIDTH)}`;
  const outcome = ok ? "ok" : `error: ${clipLine(error ?? "failed", ERROR_WIDTH)}`;
  const duration = formatDuration(durationSeconds);
  return `tool ${name}${shown}  ${outcome}${duration ? `  ${duration}` : ""}`;
}
