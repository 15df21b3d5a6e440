// Temporary stores for tests: a fresh OPENPROGRAM_HOME, optionally seeded with
// sessions from an archive (the Python OpenProgram fixture), removed with retries.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { storeInternals } from "../store/internal.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";

/**
 * The sessions written by Python OpenProgram (chat_shared, research_shared), as a
 * tar.gz of a `sessions/` folder. It lives in the repository (test/fixtures), not in
 * the installed package.
 */
export const PYTHON_SESSIONS_FIXTURE = fileURLToPath(
  new URL("../../test/fixtures/python-openprogram-sessions.tar.gz", import.meta.url),
);

/** A store in a fresh temporary directory. */
export interface TempStore {
  db: SessionDB;
  /** The sessions root. */
  root: string;
  /** A fresh OPENPROGRAM_HOME whose sessions/ is `root`. */
  home: string;
  /** Removes everything (with retries: see removeTree). */
  cleanup(): void;
}

/** Options of createTempStore. */
export interface TempStoreOptions {
  /** A tar.gz of a `sessions/` folder to start from, e.g. PYTHON_SESSIONS_FIXTURE. */
  from?: string;
}

/**
 * A store under a new temp dir (`<home>/sessions`), so no test touches
 * ~/.openprogram. It is the instance `openStore()` gives every entry for that root.
 */
export function createTempStore(prefix = "openprogram-test-", options: TempStoreOptions = {}): TempStore {
  const home = mkdtempSync(join(tmpdir(), prefix));
  const root = join(home, "sessions");
  if (options.from !== undefined) extractSessions(options.from, home);
  const db = openStore({ root });
  const cleanup = (): void => {
    // Queued registry changes are written first: a flush racing the removal would leave a file in a folder being removed.
    storeInternals(db).flushRegistrySync();
    removeTree(home);
  };
  return { db, root, home, cleanup };
}

/** Extracts a tar.gz holding a `sessions/` folder into `home`. */
function extractSessions(archive: string, home: string): void {
  if (!existsSync(archive))
    throw new Error(
      `createTempStore: no sessions archive at ${archive}. The Python fixture ships with the OpenProgram repository, not with the installed package; pass the path of an archive you have.`,
    );
  execFileSync("tar", ["xzf", archive, "-C", home]);
}

/**
 * Removes a directory tree. It is first renamed aside, so that a write still on its way
 * (a registry flush, a server closing a file) fails on the old path instead of adding
 * files to a folder being removed; then removed, retrying while something still writes
 * into it (a git a killed process left running): ENOTEMPTY and EBUSY are retried for
 * about 5 s instead of failing the test's cleanup.
 */
export function removeTree(path: string): void {
  let target = `${path}.removing-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(path, target);
  } catch {
    target = path; // already gone, or not renamable (a mount point): remove it where it is
  }
  rmSync(target, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
