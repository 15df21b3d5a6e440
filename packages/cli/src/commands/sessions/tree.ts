import type { SessionNode } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import {
  failureLines,
  nodeFailure,
  nodeStatus,
  type NodeFailure,
  sessionCallTree,
  type CallTreeNode,
} from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatDuration, textOf, writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions tree`. */
export interface TreeFlags {
  json?: boolean;
}

/** One entry of `sessions tree --json`. */
export interface TreeJsonNode {
  id: string;
  role: string;
  name: string;
  status: string | null;
  duration_seconds: number | null;
  /** The error a failed (or cancelled) node recorded, with its frames in the user's files; null otherwise. */
  error: NodeFailure | null;
  children: TreeJsonNode[];
}

/**
 * `openprogram sessions tree <id>`: the call DAG nested by `caller`, one line
 * per node with its kind, name, status and duration.
 */
export async function treeCommand(sessionId: string, flags: TreeFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let forest: CallTreeNode[];
  try {
    forest = await sessionCallTree(await requireExistingSession(sessionId));
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, forest.map(toJson));
    return EXIT_CODES.ok;
  }
  if (forest.length === 0) {
    writeLine(io.stderr, `Session ${sessionId} has no calls yet.`);
    return EXIT_CODES.ok;
  }
  const lines: string[] = [];
  const walk = (entries: readonly CallTreeNode[], depth: number): void => {
    for (const entry of entries) {
      const indent = "  ".repeat(depth);
      lines.push(`${indent}${describeNode(entry.node)}`);
      // The error under the call that failed, with where it came from in the user's files.
      const failure = nodeFailure(entry.node);
      if (failure) for (const line of failureLines(failure, { relativeTo: io.cwd })) lines.push(`${indent}  ${line}`);
      walk(entry.children, depth + 1);
    }
  };
  walk(forest, 0);
  writeLine(io.stdout, lines.join("\n"));
  return EXIT_CODES.ok;
}

function describeNode(node: SessionNode): string {
  const status = statusOf(node);
  const duration = formatDuration(node.metadata.duration_seconds);
  const label =
    node.role === "code"
      ? `call ${node.name}`
      : node.role === "llm"
        ? `model ${node.name || "(unnamed)"}`
        : node.name === "ask_user"
          ? `ask_user ${JSON.stringify(clipLine(textOf(node.input), 60))}${typeof node.output === "string" ? ` -> ${JSON.stringify(clipLine(node.output, 40))}` : ""}`
          : `user ${JSON.stringify(clipLine(typeof node.output === "string" ? node.output : "", 60))}`;
  return [label, status ? `[${status}]` : "", duration, `(${node.id})`].filter(Boolean).join("  ");
}

function statusOf(node: SessionNode): string | null {
  return nodeStatus(node) ?? null;
}

function toJson(entry: CallTreeNode): TreeJsonNode {
  const duration = entry.node.metadata.duration_seconds;
  return {
    id: entry.node.id,
    role: entry.node.role,
    name: entry.node.name,
    status: statusOf(entry.node),
    duration_seconds: typeof duration === "number" ? duration : null,
    error: nodeFailure(entry.node),
    children: entry.children.map(toJson),
  };
}
