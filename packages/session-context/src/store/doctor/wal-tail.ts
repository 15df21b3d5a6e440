import { join } from "node:path";
import { storeInternals } from "../internal.js";
import { checkpointWal, planWalRestore, restoreFromWal } from "../wal-recovery.js";
import type { SessionPaths } from "../layout.js";
import type { AddFinding } from "./types.js";
import type { SessionDB } from "../session-db.js";

/**
 * `wal_restore`: files a power cut took or tore that the session's write-ahead log still holds
 * (wal-recovery.ts). Runs before the session's folder is read, so the other checks see the files put back.
 * --fix puts them back and checkpoints the log (every file it names made durable, the log emptied), so that a
 * later repair renaming or rewriting node files cannot be undone by an old record.
 */
export async function checkWalTail(
  db: SessionDB,
  sessionId: string,
  paths: SessionPaths,
  canFix: boolean,
  add: AddFinding,
): Promise<void> {
  const plan = planWalRestore(paths);
  const findings = plan.map((entry) =>
    add({
      kind: "wal_restore",
      severity: "error",
      message: `A file the write-ahead log holds is ${entry.reason === "older" ? "older than its last logged write" : entry.reason} (a power cut).`,
      path: join(paths.dir, entry.rel),
      remedy: "Run `openprogram sessions doctor --fix` to put back its last logged text.",
    }),
  );
  if (!canFix) return;
  await storeInternals(db).withSessionLock(sessionId, async () => {
    restoreFromWal(paths);
    await checkpointWal(paths);
  });
  for (const finding of findings) {
    finding.fixed = true;
    finding.remedy = "Put back from the write-ahead log.";
  }
}
