import type { SessionNode } from "../store/types.js";
import { coversIdsOf } from "./summary-node.js";

/**
 * Python OpenProgram's one rendering rule for compaction (segment
 * substitution): when every id the active summary covers lies on `branch`
 * (oldest first), those nodes are dropped and the summary stands where the
 * segment began; otherwise the branch is returned as it is (a fork from
 * inside the covered range, or a branch that never had those turns, was never
 * compacted). Older summaries are never consulted.
 */
export function substituteSummary(branch: readonly SessionNode[], summary: SessionNode | null): readonly SessionNode[] {
  if (!summary) return branch;
  const coveredIds = coveredSet(summary);
  if (!coveredIds) return branch;
  let found = 0;
  let first = -1;
  for (let index = 0; index < branch.length; index++) {
    const node = branch[index] as SessionNode;
    if (node.id === summary.id) return branch;
    if (coveredIds.has(node.id)) {
      if (first === -1) first = index;
      found++;
    }
  }
  if (found !== coveredIds.size) return branch;
  const view: SessionNode[] = [];
  for (let index = 0; index < branch.length; index++) {
    const node = branch[index] as SessionNode;
    if (index === first) view.push(summary);
    if (!coveredIds.has(node.id)) view.push(node);
  }
  return view;
}

/** Nodes are frozen once read: a summary's covered ids are made a set once, not on every render. */
const coveredSets = new WeakMap<SessionNode, ReadonlySet<string> | null>();

function coveredSet(summary: SessionNode): ReadonlySet<string> | null {
  let set = coveredSets.get(summary);
  if (set === undefined) {
    const covered = coversIdsOf(summary);
    set = covered ? new Set(covered) : null;
    coveredSets.set(summary, set);
  }
  return set;
}
