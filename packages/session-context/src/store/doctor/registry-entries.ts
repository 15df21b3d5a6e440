import { existsSync } from "node:fs";
import { join } from "node:path";
import { readMetaFile } from "../meta-file.js";
import { readRegistryFile, registryEntryFromMeta } from "../registry.js";
import type { SessionDB } from "../session-db.js";
import type { SessionRecord } from "../types.js";
import type { DoctorFinding } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * The registry against the sessions on disk: `registry_missing_entry`,
 * `registry_mismatch` (title, agent_id, source differ from meta.json) and
 * `registry_orphan_entry` (listed, not on disk). --fix applies all changes in
 * one registry write.
 */
export async function checkRegistryEntries(
  db: SessionDB,
  sessionIds: readonly string[],
  wholeStore: boolean,
  findings: DoctorFinding[],
  fix: boolean,
): Promise<void> {
  const reading = readRegistryFile(db.root);
  if (reading.state !== "ok") return;
  const entries = reading.entries;
  const changes: Array<(all: Record<string, SessionRecord>) => void> = [];
  for (const sessionId of sessionIds) {
    const metaReading = readMetaFile(storeInternals(db).paths(sessionId).meta);
    if (metaReading.state !== "ok") continue;
    const meta = metaReading.meta;
    const entry = entries[sessionId];
    if (!entry) {
      findings.push({
        sessionId,
        kind: "registry_missing_entry",
        severity: "error",
        message: `Session '${sessionId}' is on disk but not in the registry.`,
        fixed: fix,
        remedy: fix ? "Added it from meta.json." : "Add it from meta.json (run with --fix).",
      });
      changes.push((all) => {
        all[sessionId] = registryEntryFromMeta(meta);
      });
      continue;
    }
    const differing = (["title", "agent_id", "source"] as const).filter(
      (field) => meta[field] !== undefined && entry[field] !== meta[field],
    );
    if (differing.length > 0) {
      findings.push({
        sessionId,
        kind: "registry_mismatch",
        severity: "warning",
        message: `The registry's ${differing.join(", ")} differ from meta.json.`,
        fixed: fix,
        remedy: fix ? "Copied them from meta.json." : "Copy them from meta.json (run with --fix).",
      });
      changes.push((all) => {
        const current = all[sessionId];
        if (current) for (const field of differing) current[field] = meta[field];
      });
    }
  }
  if (wholeStore) {
    for (const sessionId of Object.keys(entries)) {
      if (existsSync(join(db.root, sessionId, "meta.json")) || existsSync(join(db.root, sessionId, "history")))
        continue;
      findings.push({
        sessionId,
        kind: "registry_orphan_entry",
        severity: "warning",
        message: `The registry lists '${sessionId}', which is not on disk.`,
        fixed: fix,
        remedy: fix ? "Removed the entry." : "Remove the entry (run with --fix).",
      });
      changes.push((all) => {
        delete all[sessionId];
      });
    }
  }
  if (fix && changes.length > 0) {
    await storeInternals(db).updateRegistry((all) => {
      for (const change of changes) change(all);
    });
  }
}
