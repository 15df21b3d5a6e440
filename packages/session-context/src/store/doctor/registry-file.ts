import { join } from "node:path";
import { INDEX_FILE } from "../layout.js";
import { readRegistryFile } from "../registry.js";
import type { SessionDB } from "../session-db.js";
import type { DoctorFinding } from "./types.js";
import { storeInternals } from "../internal.js";

/** `registry_corrupt`: index.json missing, not JSON or not an object; --fix rebuilds it from the meta.json files. */
export async function checkRegistryFile(db: SessionDB, findings: DoctorFinding[], fix: boolean): Promise<void> {
  const reading = readRegistryFile(db.root);
  if (reading.state === "ok") return;
  const finding: DoctorFinding = {
    sessionId: null,
    kind: "registry_corrupt",
    severity: "error",
    message: `The registry ${reading.state === "missing" ? "is missing" : reading.reason}.`,
    path: join(db.root, INDEX_FILE),
    fixed: false,
    remedy: "Rebuild it from the sessions' meta.json files (run with --fix).",
  };
  if (fix) {
    await storeInternals(db).updateRegistry(() => undefined);
    finding.fixed = true;
    finding.remedy =
      "Rebuilt from the sessions' meta.json files (a corrupt file was kept as index.json.corrupt-<time>).";
  }
  findings.push(finding);
}
