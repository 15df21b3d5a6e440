import { statusWhenIdle } from "../abandoned-turn.js";
import { readRegistryFile } from "../registry.js";
import type { SessionScan } from "./types.js";

/**
 * `stuck_status`: the registry says "running" or "needs_input" with no turn
 * running, or "damaged" although meta.json reads fine; --fix sets it to idle, or to needs_input while a
 * question waits (abandoned-turn.ts).
 */
export async function checkStuckStatus(scan: SessionScan): Promise<void> {
  if (scan.live) return;
  const registry = readRegistryFile(scan.db.root);
  const entry = registry.state === "ok" ? registry.entries[scan.sessionId] : undefined;
  if (!entry) return;
  const idleStatus = statusWhenIdle(
    scan.nodes.map((item) => item.node),
    "idle",
  );
  const stuck = (entry.status === "running" || entry.status === "needs_input") && entry.status !== idleStatus;
  const healed = entry.status === "damaged" && scan.meta !== null;
  if (!stuck && !healed) return;
  const finding = scan.add({
    kind: "stuck_status",
    severity: "warning",
    message: stuck
      ? `The session's status is '${entry.status}' but no turn is running.`
      : "The session's status is 'damaged' but its meta.json reads fine now.",
    remedy: `Set it to ${idleStatus} (run with --fix).`,
  });
  if (scan.canFix) {
    await scan.db.setStatus(scan.sessionId, idleStatus);
    finding.fixed = true;
    finding.remedy = `Set it to ${idleStatus}.`;
  }
}
