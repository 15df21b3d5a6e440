import type { SessionNode } from "./types.js";

/**
 * What a node's `metadata.status` says, in the words Python OpenProgram uses:
 * a call is `running` until it ends `completed`, `failed` or `cancelled`; a
 * question (`ask_user`) is `waiting` until `answered`, `declined`, `timed_out`,
 * `cancelled` or `failed`; work left behind by a dead process is `interrupted`
 * (found by recovery) or `killed` (its process group was killed).
 */
export type NodeStatus =
  | "running"
  | "waiting"
  | "completed"
  | "failed"
  | "cancelled"
  | "answered"
  | "declined"
  | "timed_out"
  | "interrupted"
  | "killed";

/** The statuses of work that has not ended. */
const UNFINISHED: ReadonlySet<string> = new Set<NodeStatus>(["running", "waiting"]);

/**
 * The status recorded on a node: one of ours, or another string another
 * writer left (shown as it is), or undefined when none is recorded.
 */
export function nodeStatus(node: Pick<SessionNode, "metadata">): NodeStatus | (string & {}) | undefined {
  const status = node.metadata.status;
  return typeof status === "string" ? status : undefined;
}

/** True while a node's work has not ended: a call still `running`, a question still `waiting`. */
export function isUnfinished(node: Pick<SessionNode, "metadata">): boolean {
  const status = nodeStatus(node);
  return status !== undefined && UNFINISHED.has(status);
}
