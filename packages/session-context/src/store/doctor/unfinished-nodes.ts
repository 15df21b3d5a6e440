import { join } from "node:path";
import { nowSeconds } from "../../time/now-seconds.js";
import { statusAfterAbandon } from "../abandoned-turn.js";
import type { SessionScan } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * `unfinished_node`: a node still running with no turn running; --fix records it interrupted. A waiting
 * question is not damage: it outlives its process and answering it resumes the turn (abandoned-turn.ts).
 */
export async function checkUnfinishedNodes(scan: SessionScan): Promise<void> {
  if (scan.live) return;
  const unfinished = scan.nodes.filter((entry) => statusAfterAbandon(entry.node) !== null);
  for (const { file, node } of unfinished) {
    const finding = scan.add({
      kind: "unfinished_node",
      severity: "warning",
      message: `Node ${node.id} (${node.name || node.role}) is still '${String(node.metadata.status)}' but no turn is running.`,
      path: join(scan.paths.history, file),
      remedy: "Record it as interrupted (run with --fix).",
    });
    if (scan.canFix) {
      storeInternals(scan.db).invalidate(scan.sessionId);
      await scan.db.updateNode(scan.sessionId, node.id, {
        metadata: { status: "interrupted", interrupted_at: nowSeconds() },
      });
      finding.fixed = true;
      finding.remedy = "Recorded it as interrupted.";
    }
  }
}
