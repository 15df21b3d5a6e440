import { lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CREATING_PREFIX } from "../layout.js";
import type { SessionDB } from "../session-db.js";
import { TEMP_AGE_MS } from "./temp-leftovers.js";
import type { DoctorFinding } from "./types.js";

/**
 * `temp_leftover` in the sessions root: a hidden `.creating-<id>-<hex>/`
 * folder left by a create that was killed before it renamed the new session
 * into place. No session was made; --fix removes the folder.
 */
export async function checkCreatingLeftovers(db: SessionDB, findings: DoctorFinding[], fix: boolean): Promise<void> {
  for (const name of readdirSync(db.root)) {
    if (!name.startsWith(CREATING_PREFIX)) continue;
    const path = join(db.root, name);
    const stat = lstatSync(path, { throwIfNoEntry: false });
    if (!stat?.isDirectory() || Date.now() - stat.mtimeMs < TEMP_AGE_MS) continue;
    const finding: DoctorFinding = {
      sessionId: null,
      kind: "temp_leftover",
      severity: "warning",
      message:
        "A session that was being created when its process was killed is left half-made (it never became a session).",
      path,
      fixed: false,
      remedy: "Delete it: the create it belonged to never completed (run with --fix).",
    };
    if (fix) {
      rmSync(path, { recursive: true, force: true });
      finding.fixed = true;
      finding.remedy = "Deleted it.";
    }
    findings.push(finding);
  }
}
