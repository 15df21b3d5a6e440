import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isValidSessionId } from "../../ids.js";
import type { SessionDB } from "../session-db.js";
import { checkSession } from "./check-session.js";
import { checkCreatingLeftovers } from "./creating-leftovers.js";
import { checkRegistryEntries } from "./registry-entries.js";
import { checkRegistryFile } from "./registry-file.js";
import { checkRootTempLeftovers } from "./root-temp-leftovers.js";
import type { DoctorFinding, DoctorReport } from "./types.js";

/**
 * Checks a store (or one session) for everything a crash, a full disk, a
 * foreign tool or a hand edit can leave behind, and with `fix` repairs what it
 * can without losing data, reporting every change. Every session is checked,
 * whatever another one's state. Sessions with a live turn are checked but
 * never repaired.
 */
export async function doctorStore(
  db: SessionDB,
  options: { sessionId?: string; fix?: boolean } = {},
): Promise<DoctorReport> {
  const fix = options.fix === true;
  const findings: DoctorFinding[] = [];
  if (!existsSync(db.root)) return { root: db.root, sessionsChecked: 0, findings, healthy: true };
  // The registry file is checked as it is on disk: this process's queued changes go there first (registry.ts).
  await db.flushRegistry().catch(() => undefined);
  const wholeStore = options.sessionId === undefined;
  const sessionIds = options.sessionId !== undefined ? [options.sessionId] : sessionEntries(db.root);
  if (wholeStore) {
    await checkRegistryFile(db, findings, fix);
    await checkCreatingLeftovers(db, findings, fix);
    await checkRootTempLeftovers(db, findings, fix);
  }
  for (const sessionId of sessionIds) await checkSession(db, sessionId, findings, fix);
  // A session reached through a link is reported above and left alone, also by the registry.
  const realSessions = sessionIds.filter((sessionId) =>
    lstatSync(join(db.root, sessionId), { throwIfNoEntry: false })?.isDirectory(),
  );
  await checkRegistryEntries(db, realSessions, wholeStore, findings, fix);
  return {
    root: db.root,
    sessionsChecked: sessionIds.length,
    findings,
    healthy: !findings.some((finding) => finding.severity === "error" && !finding.fixed),
  };
}

/** Names in the root a session could have: directories, and links (reported, never followed). */
function sessionEntries(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => (entry.isDirectory() || entry.isSymbolicLink()) && isValidSessionId(entry.name))
    .map((entry) => entry.name)
    .sort();
}
