import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { TEMP_AGE_MS } from "./temp-leftovers.js";
import type { SessionScan } from "./types.js";

/**
 * `git_lock_leftover`: a git lock file (`.git/index.lock`, `.git/refs/heads/<branch>.lock`) left by a commit
 * killed midway. Our next commit removes one itself, but until then git (and so the Python store's commit_turn)
 * refuses to commit in the session; --fix deletes it. Temp object files (`tmp_obj_*`) are not reported: git
 * fsck ignores them and git gc removes them.
 */
export async function checkGitLeftovers(scan: SessionScan): Promise<void> {
  if (scan.live) return;
  const git = scan.paths.git;
  const candidates = [join(git, "index.lock"), ...lockFiles(join(git, "refs", "heads"))];
  for (const path of candidates) {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat || Date.now() - stat.mtimeMs < TEMP_AGE_MS) continue;
    const finding = scan.add({
      kind: "git_lock_leftover",
      severity: "error",
      message: "A git lock file from an interrupted commit is left in the session's repository; git refuses to commit.",
      path,
      remedy: "Delete it: the commit it belonged to never completed (run with --fix).",
    });
    if (scan.canFix) {
      rmSync(path, { force: true });
      finding.fixed = true;
      finding.remedy = "Deleted it.";
    }
  }
}

function lockFiles(folder: string): string[] {
  try {
    return readdirSync(folder, { recursive: true, encoding: "utf8" })
      .filter((name) => name.endsWith(".lock"))
      .map((name) => join(folder, name));
  } catch {
    return [];
  }
}
