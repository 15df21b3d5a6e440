import type { SessionNode } from "./types.js";

/** Follows predecessor links back from `start`; oldest first; stops at ROOT, null, a missing node or a loop. */
export function walkBranch(nodes: ReadonlyMap<string, SessionNode>, start: string | null | undefined): SessionNode[] {
  const branch: SessionNode[] = [];
  const seen = new Set<string>();
  let current = start ?? null;
  while (current !== null && current !== "ROOT" && !seen.has(current)) {
    seen.add(current);
    const node = nodes.get(current);
    if (!node) break;
    branch.push(node);
    current = node.predecessor;
  }
  return branch.reverse();
}
