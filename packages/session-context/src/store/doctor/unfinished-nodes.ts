import { join } from "node:path";
import { nowSeconds } from "../../time/now-seconds.js";
import { isUnfinished } from "../node-status.js";
import type { SessionScan } from "./types.js";

/** `unfinished_node`: a node still "running" or "waiting" with no turn running; --fix records it interrupted. */
export async function checkUnfinishedNodes(scan: SessionScan): Promise<void> {
  if (scan.live) return;
  const unfinished = scan.nodes.filter((entry) => isUnfinished(entry.node));
  for (const { file, node } of unfinished) {
    const finding = scan.add({
      kind: "unfinished_node",
      severity: "warning",
      message: `Node ${node.id} (${node.name || node.role}) is still '${String(node.metadata.status)}' but no turn is running.`,
      path: join(scan.paths.history, file),
      remedy: "Record it as interrupted (run with --fix).",
    });
    if (scan.canFix) {
      scan.db.invalidate(scan.sessionId);
      await scan.db.updateNode(scan.sessionId, node.id, {
        metadata: { status: "interrupted", interrupted_at: nowSeconds() },
      });
      finding.fixed = true;
      finding.remedy = "Recorded it as interrupted.";
    }
  }
}
