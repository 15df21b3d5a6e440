import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionNotFoundError } from "../errors.js";
import { collectGarbage } from "../store/git-repo.js";
import { unsafeConfigKeys } from "../store/git/git-config-check.js";
import { listPacks } from "../store/git/pack-merge.js";
import { unsafeRepositoryEntries } from "../store/git/repository-tree.js";
import { openStore } from "../store/open-store.js";
import { storeInternals } from "../store/internal.js";
import type { StoreOption } from "./manage.js";

/** One session repository `gcSessions` looked at. */
export interface GcEntry {
  sessionId: string;
  /** Bytes `.git/` took on disk before and after (allocated blocks, as `du` counts them). */
  bytesBefore: number;
  bytesAfter: number;
  /**
   * Not collected, and why: a turn is running in it, it has no repository yet, or it is already one pack and no
   * loose object (gc could only add its own files to it), or its `.git/config` sets keys outside the allowlist
   * (git is never run there: `sessions doctor` names them), or `.git` holds a symbolic link, FIFO, socket or device
   * (git would write through it or block on it).
   */
  skipped?: "running" | "no_repository" | "already_packed" | "unsafe_git_config" | "unsafe_path";
}

/** What `gcSessions` did. */
export interface GcReport {
  root: string;
  sessions: GcEntry[];
  /** Sum of `bytesBefore - bytesAfter` over the repositories collected. */
  bytesSaved: number;
}

/**
 * Runs `git gc` in each session repository (or one), never in a session
 * running a turn, and under the session lock so no commit of ours
 * runs meanwhile; reports the space `.git/` took before and after.
 */
export async function gcSessions(options: StoreOption & { sessionId?: string } = {}): Promise<GcReport> {
  const db = options.db ?? openStore();
  const internals = storeInternals(db);
  let ids: string[];
  if (options.sessionId !== undefined) {
    if (!internals.exists(options.sessionId)) throw new SessionNotFoundError(options.sessionId);
    ids = [options.sessionId];
  } else {
    ids = (await db.listSessions({ includeArchived: true }))
      .map((record) => record.id)
      .filter((id) => internals.exists(id));
  }
  const report: GcReport = { root: db.root, sessions: [], bytesSaved: 0 };
  for (const sessionId of ids) {
    const paths = internals.paths(sessionId);
    const bytesBefore = diskUsage(paths.git);
    const entry: GcEntry = { sessionId, bytesBefore, bytesAfter: bytesBefore };
    if (bytesBefore === 0) entry.skipped = "no_repository";
    else if (internals.liveTurnIds(sessionId).length > 0) entry.skipped = "running";
    else if (alreadyPacked(paths.git)) entry.skipped = "already_packed";
    else if (unsafeRepositoryEntries(paths.git, 1).length > 0) entry.skipped = "unsafe_path";
    else if (unsafeConfigKeys(paths.git).length > 0) entry.skipped = "unsafe_git_config";
    else {
      // Under the session lock, which every commit of ours takes (it makes `.state/` for a session written by Python).
      await internals.withSessionLock(sessionId, () => collectGarbage(paths));
      entry.bytesAfter = diskUsage(paths.git);
      report.bytesSaved += bytesBefore - entry.bytesAfter;
    }
    report.sessions.push(entry);
  }
  return report;
}

/** Allocated bytes under a directory (0 when it is missing), without following links. */
function diskUsage(path: string): number {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return 0;
  }
  let total = stat.blocks * 512;
  if (stat.isDirectory()) {
    for (const name of readdirSync(path)) total += diskUsage(join(path, name));
  }
  return total;
}

/** At most one pack and no loose object: nothing for gc to merge or pack. */
function alreadyPacked(gitDir: string): boolean {
  if (listPacks(gitDir).length > 1) return false;
  const objects = join(gitDir, "objects");
  let folders: string[];
  try {
    folders = readdirSync(objects);
  } catch {
    return true;
  }
  return !folders.some((folder) => /^[0-9a-f]{2}$/.test(folder) && readdirSync(join(objects, folder)).length > 0);
}
