// Reading a session back through the core's public session-management API.
import type { SessionDB, SessionNode } from "@openprogram/session-context";
import { describeSession } from "@openprogram/session-context/store";

/** The session's nodes, in seq order. */
export async function nodesOf(db: SessionDB, sessionId: string): Promise<SessionNode[]> {
  return (await describeSession(sessionId, { db })).nodes;
}

/** The code nodes named `name`. */
export function calls(nodes: readonly SessionNode[], name: string): SessionNode[] {
  return nodes.filter((node) => node.role === "code" && node.name === name);
}

/** The one code node named `name`; throws unless there is exactly one. */
export function onlyCall(nodes: readonly SessionNode[], name: string): SessionNode {
  const found = calls(nodes, name);
  if (found.length !== 1) throw new Error(`expected one ${name} call, found ${found.length}`);
  return found[0] as SessionNode;
}
