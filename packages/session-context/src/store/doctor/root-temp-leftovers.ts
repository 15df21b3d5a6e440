import { lstatSync, readdirSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { SessionDB } from "../session-db.js";
import { TEMP_AGE_MS } from "./temp-leftovers.js";
import type { DoctorFinding } from "./types.js";

/**
 * The temp files of the store-wide caches (`.<name>.tmp-<hex>`): index.json's flush, and the usage cache's, whose
 * own name starts with a dot (so `..usage-cache.json.tmp-<hex>`).
 */
const ROOT_TEMP_FILE = /^\.(index\.json|\.?usage-cache\.json)\.tmp-[0-9a-f]+$/;
/** A deleted session's folder, moved aside by deleteSession and removed after it (never a session: ids never start with '.'). */
const DELETED_SESSION = /^\.deleted-.+-[0-9a-f]{8}$/;

/**
 * `temp_leftover` in the sessions root: the temp file of an index.json flush
 * or a usage-cache write whose process was killed before it renamed the file
 * into place. Only files older than TEMP_AGE_MS count, so a writer still at
 * work never loses its file; --fix deletes them (the caches they would have
 * become are rebuilt from the sessions' own files).
 */
export async function checkRootTempLeftovers(db: SessionDB, findings: DoctorFinding[], fix: boolean): Promise<void> {
  for (const name of readdirSync(db.root)) {
    if (DELETED_SESSION.test(name)) {
      await checkDeletedSession(join(db.root, name), findings, fix);
      continue;
    }
    if (!ROOT_TEMP_FILE.test(name)) continue;
    const path = join(db.root, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat?.isFile() || Date.now() - stat.mtimeMs < TEMP_AGE_MS) continue;
    const finding: DoctorFinding = {
      sessionId: null,
      kind: "temp_leftover",
      severity: "warning",
      message: `A temp file of ${name.includes("usage-cache") ? ".usage-cache.json" : "index.json"} is left by a write that never completed (its process was killed).`,
      path,
      fixed: false,
      remedy: "Delete it: the write it belonged to never completed (run with --fix).",
    };
    if (fix) {
      rmSync(path, { force: true });
      finding.fixed = true;
      finding.remedy = "Deleted it.";
    }
    findings.push(finding);
  }
}

/** A deleted session's folder whose removal was cut short (its process killed while removing it). */
async function checkDeletedSession(path: string, findings: DoctorFinding[], fix: boolean): Promise<void> {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (!stat?.isDirectory() || Date.now() - stat.mtimeMs < TEMP_AGE_MS) return;
  const finding: DoctorFinding = {
    sessionId: null,
    kind: "temp_leftover",
    severity: "warning",
    message: "A deleted session's folder is left by a removal that never completed (its process was killed).",
    path,
    fixed: false,
    remedy: "Delete it: the session was deleted (run with --fix).",
  };
  if (fix) {
    await rm(path, { recursive: true, force: true });
    finding.fixed = true;
    finding.remedy = "Deleted it.";
  }
  findings.push(finding);
}
