import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { SessionScan } from "./types.js";

/** A temp file this old cannot belong to a write in progress. */
export const TEMP_AGE_MS = 60_000;

/** `temp_leftover` in history/: the temp file of a write that never completed; --fix deletes it. */
export async function checkTempLeftovers(scan: SessionScan): Promise<void> {
  for (const file of scan.temps) {
    const path = join(scan.paths.history, file);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat || Date.now() - stat.mtimeMs < TEMP_AGE_MS) continue;
    const finding = scan.add({
      kind: "temp_leftover",
      severity: "warning",
      message: `A temp file from an interrupted write is left in history/.`,
      path,
      remedy: "Delete it: the write it belonged to never completed (run with --fix).",
    });
    if (scan.canFix) {
      rmSync(path, { force: true });
      finding.fixed = true;
      finding.remedy = "Deleted it.";
    }
  }
}
