import { lstatSync, readdirSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import { UnsupportedIndexError } from "./git-index.js";

/** A file `git add -A` would stage: its path relative to the session, and its stat. */
export interface WorktreeFile {
  path: string;
  absolute: string;
  stat: BigIntStats;
}

/** Our in-flight temp files (`.<name>.tmp-<hex>`), excluded in every folder by `.git/info/exclude`. */
const TEMP_FILE = /^\..*\.tmp-/;
/** Files that change what git stages or how: with one of them present, git itself makes the commit. */
const GIT_RULE_FILES = new Set([".gitignore", ".gitattributes", ".gitmodules"]);

/**
 * Lists what `git add -A` stages in a session directory under our exclusions
 * (`/.state/`, `.*.tmp-*`), in path order. Anything whose staging needs more
 * of git's rules (an ignore or attributes file, a nested repository) throws
 * UnsupportedIndexError, and the caller leaves the commit to git.
 */
export function scanWorktree(sessionDir: string, options: { skipHistory?: boolean } = {}): WorktreeFile[] {
  const files: WorktreeFile[] = [];
  walk(sessionDir, "", files, options.skipHistory === true);
  return files;
}

/** The node files of history/ named, as scanWorktree would list them (a name that is not a file now is left out). */
export function scanHistoryFiles(sessionDir: string, names: Iterable<string>): WorktreeFile[] {
  const files: WorktreeFile[] = [];
  for (const name of names) {
    if (TEMP_FILE.test(name) || name.includes("/")) continue;
    const absolute = join(sessionDir, "history", name);
    const stat = lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
    if (stat && (stat.isFile() || stat.isSymbolicLink())) files.push({ path: `history/${name}`, absolute, stat });
  }
  return files;
}

function walk(directory: string, prefix: string, files: WorktreeFile[], skipHistory = false): void {
  const names = readdirSync(directory).sort();
  for (const name of names) {
    if (prefix === "" && (name === ".git" || name === ".state")) continue;
    if (prefix === "" && skipHistory && name === "history") continue;
    if (TEMP_FILE.test(name)) continue;
    if (GIT_RULE_FILES.has(name) || name === ".git") throw new UnsupportedIndexError(`${prefix}${name} is present`);
    const absolute = join(directory, name);
    const stat = lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
    if (!stat) continue;
    const path = `${prefix}${name}`;
    if (stat.isDirectory()) walk(absolute, `${path}/`, files);
    else if (stat.isFile() || stat.isSymbolicLink()) files.push({ path, absolute, stat });
  }
}
