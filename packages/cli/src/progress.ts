import type { SessionEvent, SessionNode } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import { nodeStatus, type NodeStatus } from "@openprogram/session-context/store";
import { formatDuration, textOf, writeText } from "./output.js";

const FINAL_STATUSES: ReadonlySet<string> = new Set<NodeStatus>([
  "completed",
  "failed",
  "cancelled",
  "interrupted",
  "killed",
  "answered",
  "declined",
  "timed_out",
]);
const MARKS: Partial<Record<NodeStatus | (string & {}), string>> = {
  completed: "✓",
  answered: "✓",
  failed: "✗",
  cancelled: "⊘",
  interrupted: "⊘",
  killed: "⊘",
};

/** One `onEvent` sink feeding each of `sinks` in order (undefined: none given). */
export function combineSinks(
  sinks: ReadonlyArray<((event: SessionEvent) => void) | undefined>,
): ((event: SessionEvent) => void) | undefined {
  const given = sinks.filter((sink): sink is (event: SessionEvent) => void => sink !== undefined);
  if (given.length <= 1) return given[0];
  return (event) => {
    for (const sink of given) sink(event);
  };
}

/** What the progress printer shows. */
export interface ProgressOptions {
  /** Show every finished call (model requests and questions too), indented by caller. */
  calls: boolean;
  /** Show the top-level program's direct subcalls ("stages") even when `calls` is off. */
  stages: boolean;
}

/**
 * An `onEvent` sink that prints one line per finished call on `stream`:
 * mark, name, status and duration, indented under its caller. Used only when
 * stderr is a terminal (or for research stages), so piped output stays quiet.
 */
export function createProgressPrinter(
  stream: NodeJS.WritableStream,
  options: ProgressOptions,
): (event: SessionEvent) => void {
  const depthById = new Map<string, number>();
  const print = (node: SessionNode, status: string): void => {
    const depth = depthById.get(node.id) ?? 0;
    if (!options.calls && !(options.stages && depth === 1 && node.role === "code")) return;
    const label =
      node.role === "user"
        ? `ask_user ${JSON.stringify(clipLine(textOf(node.input), 40))}`
        : node.role === "llm"
          ? `model ${node.name}`
          : node.name;
    const duration = formatDuration(node.metadata.duration_seconds);
    writeText(
      stream,
      `${"  ".repeat(depth)}${MARKS[status] ?? "·"} ${label}  ${status}${duration ? `  ${duration}` : ""}\n`,
    );
  };
  return (event) => {
    if (event.type !== "node") return;
    const { node } = event;
    if (event.op === "append") depthById.set(node.id, node.caller === "" ? 0 : (depthById.get(node.caller) ?? 0) + 1);
    const status = nodeStatus(node) ?? "";
    const finishesHere = event.op === "update" || node.role === "llm";
    if (finishesHere && FINAL_STATUSES.has(status)) print(node, status);
  };
}
