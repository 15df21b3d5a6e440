import { existsSync, lstatSync } from "node:fs";
import type { SessionDB } from "../session-db.js";
import { liveTurnLeases } from "../turn-lease.js";
import { checkCorruptNodes } from "./corrupt-nodes.js";
import { checkGitConfig } from "./git-config.js";
import { checkGitLeftovers } from "./git-leftovers.js";
import { checkGitObjects } from "./git-objects.js";
import { checkHead } from "./head.js";
import { checkMeta } from "./meta.js";
import { readHistoryFolder } from "./read-session.js";
import { checkSeqGaps } from "./seq-gaps.js";
import { checkSeqNumbers } from "./seq-numbers.js";
import { checkStuckStatus } from "./stuck-status.js";
import { checkTempLeftovers } from "./temp-leftovers.js";
import type { DoctorFinding, FindingDraft, SessionCheck, SessionScan } from "./types.js";
import { checkUncommittedTail } from "./uncommitted-tail.js";
import { checkUnfinishedNodes } from "./unfinished-nodes.js";
import { checkUnsafePaths } from "./unsafe-paths.js";
import { checkWalTail } from "./wal-tail.js";
import { storeInternals } from "../internal.js";

/** The checks of one session, in the order their repairs build on each other. */
const SESSION_CHECKS: readonly SessionCheck[] = [
  checkTempLeftovers,
  checkGitConfig,
  checkCorruptNodes,
  checkMeta,
  checkSeqNumbers,
  checkSeqGaps,
  checkHead,
  checkUnfinishedNodes,
  checkStuckStatus,
  checkGitLeftovers,
  checkUncommittedTail,
  checkGitObjects,
];

/**
 * Runs every check on one session. A check that throws becomes a
 * `check_failed` finding, so one broken session never hides the others.
 */
export async function checkSession(
  db: SessionDB,
  sessionId: string,
  findings: DoctorFinding[],
  fix: boolean,
): Promise<void> {
  const paths = storeInternals(db).paths(sessionId);
  if (!lstatSync(paths.dir, { throwIfNoEntry: false })) return;
  let live = false;
  const add = (draft: FindingDraft): DoctorFinding => {
    const finding: DoctorFinding = { sessionId, fixed: false, ...draft };
    if (live && fix && !finding.fixed)
      finding.remedy = `${finding.remedy} (not repaired: a turn is running in this session)`;
    findings.push(finding);
    return finding;
  };
  if (!checkUnsafePaths(paths, add)) return;
  if (!existsSync(paths.meta) && !existsSync(paths.history)) {
    add({
      kind: "not_a_session",
      severity: "warning",
      message: "A folder named like a session has neither meta.json nor history/: it is not an OpenProgram session.",
      path: paths.dir,
      remedy:
        "Nothing is done to it (OpenProgram never takes over a folder it did not create); move it out of the sessions root.",
    });
    return;
  }
  live = liveTurnLeases(paths).length > 0;
  if (!live) await checkWalTail(db, sessionId, paths, fix, add);
  const scan: SessionScan = {
    db,
    sessionId,
    paths,
    ...readHistoryFolder(paths),
    meta: null,
    live,
    canFix: fix && !live,
    add,
  };
  try {
    for (const check of SESSION_CHECKS) await check(scan);
  } catch (error) {
    add({
      kind: "check_failed",
      severity: "error",
      message: `Checking the session stopped: ${(error as Error).message}`,
      remedy: "Fix what the message names by hand, then run the doctor again.",
    });
  } finally {
    storeInternals(db).invalidate(sessionId);
  }
}
