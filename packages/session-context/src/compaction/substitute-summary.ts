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
  const covered = coversIdsOf(summary);
  if (!covered) return branch;
  const coveredIds = new Set(covered);
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
