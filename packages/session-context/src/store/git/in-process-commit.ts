import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { parseNodeText } from "../history.js";
import { GIT_EXCLUDES, parseNodeFileName, type SessionPaths } from "../layout.js";
import {
  comparePaths,
  entryFromStat,
  parseIndex,
  serializeIndex,
  statMatches,
  UnsupportedIndexError,
  type IndexEntry,
} from "./git-index.js";
import { hasLooseObject, readLooseObject, writeLooseObject, type GitObjectType } from "./loose-objects.js";
import { readHead, updateRef } from "./refs.js";
import { writeTrees } from "./tree-builder.js";
import { scanWorktree } from "./worktree-scan.js";

/** Who commits, as the Python store's repositories say. */
export interface CommitIdentity {
  name: string;
  email: string;
}

/** What a commit found wrong with a node file it therefore left out (the caller reports it). */
export interface LeftOutFile {
  relativePath: string;
  reason: string;
}

/** The result of an in-process commit: the new commit (null when nothing changed) and the node files left out. */
export interface InProcessCommit {
  commit: string | null;
  leftOut: LeftOutFile[];
}

/** The parsed index of each repository, reused while the file is the one we parsed or wrote. */
const indexCache = new Map<string, { key: string; entries: IndexEntry[] }>();
/** Each repository's HEAD commit and its tree, so "nothing changed" needs no object read. */
const headTrees = new Map<string, { commit: string; tree: string }>();
/** Repositories whose settings were checked (no hooks, no ignore rules beyond ours). */
const checkedRepositories = new Set<string>();
const MAX_CACHED = 1024;

/**
 * `git add -A && git commit -m message` done in this process: the files of the
 * session are compared with the index by their stat (as git does), changed
 * ones are hashed and written as loose objects, then the trees, the commit, the
 * index (under `index.lock`, as git holds it) and the branch ref (under
 * `<ref>.lock`). Objects come before the index and the index before the ref,
 * so a kill at any point leaves a repository that `git fsck` accepts, with at
 * worst changes staged and not yet committed, which the next commit takes.
 *
 * Throws UnsupportedIndexError for a repository that needs more of git than
 * this does (hooks, ignore or attributes files, a merge, index version 4,
 * packed history); the caller then runs git itself. Call under the session's
 * commit lock, with `.git/index.lock` not held by anyone else.
 */
export function commitInProcess(
  paths: SessionPaths,
  message: string,
  identity: CommitIdentity,
  now = new Date(),
): InProcessCommit {
  const gitDir = paths.git;
  checkRepositorySettings(gitDir);
  const head = readHead(gitDir);
  // Checked before anything is written: a parent that is gone fails the commit (a history on it would be broken).
  const parentTree = head.commit === null ? null : treeOf(gitDir, head.commit);
  const lockPath = join(gitDir, "index.lock");
  const lockFd = openSync(lockPath, "wx", 0o600);
  let locked = true;
  try {
    const previous = readIndex(gitDir);
    const byPath = new Map(previous.map((entry) => [entry.path, entry]));
    const racyBefore = indexMtime(gitDir);
    const leftOut: LeftOutFile[] = [];
    const entries: IndexEntry[] = [];
    const write = (type: GitObjectType, content: Uint8Array): string => writeLooseObject(gitDir, type, content);
    for (const file of scanWorktree(paths.dir).sort((a, b) => comparePaths(a.path, b.path))) {
      const mode = file.stat.isSymbolicLink() ? 0o120000 : (Number(file.stat.mode) & 0o111) !== 0 ? 0o100755 : 0o100644;
      const old = byPath.get(file.path);
      const fresh = entryFromStat(file.path, old?.id ?? "", mode, file.stat);
      // Git's racy rule: a file changed in the same instant the index was written may look unchanged by its stat.
      if (old && statMatches(old, fresh) && !isRacy(old, racyBefore)) {
        entries.push(old);
        continue;
      }
      const content = mode === 0o120000 ? Buffer.from(readlinkSync(file.absolute)) : readFileSync(file.absolute);
      const problem = nodeFileProblem(file.path, content);
      if (problem !== null) {
        // A torn or foreign-damaged node file keeps its last committed version, for `sessions doctor --fix`.
        leftOut.push({ relativePath: file.path, reason: problem });
        if (old) entries.push(old);
        continue;
      }
      fresh.id = write("blob", content);
      entries.push(fresh);
    }
    const tree = writeTrees(entries, write);
    if (parentTree === tree) {
      finishIndex(gitDir, lockFd, entries);
      locked = false;
      return { commit: null, leftOut };
    }
    const commit = write("commit", commitBody(tree, head.commit, identity, message, now));
    finishIndex(gitDir, lockFd, entries);
    locked = false;
    updateRef(gitDir, head.ref, commit);
    remember(headTrees, gitDir, { commit, tree });
    return { commit, leftOut };
  } finally {
    if (locked) {
      closeSync(lockFd);
      try {
        unlinkSync(lockPath);
      } catch {
        // already gone
      }
    }
  }
}

/** Writes the new index into the held `index.lock` and renames it over `index`, as git commits a lock file. */
function finishIndex(gitDir: string, lockFd: number, entries: IndexEntry[]): void {
  try {
    writeSync(lockFd, serializeIndex(entries));
  } finally {
    closeSync(lockFd);
  }
  const indexPath = join(gitDir, "index");
  renameSync(join(gitDir, "index.lock"), indexPath);
  remember(indexCache, gitDir, { key: indexKey(indexPath), entries });
}

function readIndex(gitDir: string): IndexEntry[] {
  const indexPath = join(gitDir, "index");
  const key = indexKey(indexPath);
  if (key === "missing") return [];
  const cached = indexCache.get(gitDir);
  if (cached?.key === key) return cached.entries;
  const entries = parseIndex(readFileSync(indexPath));
  remember(indexCache, gitDir, { key, entries });
  return entries;
}

function indexKey(indexPath: string): string {
  const stat = statSync(indexPath, { bigint: true, throwIfNoEntry: false });
  return stat ? `${stat.ino}:${stat.size}:${stat.mtimeNs}` : "missing";
}

/** The index's mtime in (seconds, nanoseconds), for git's racy-entry rule. */
function indexMtime(gitDir: string): { seconds: number; nanoseconds: number } {
  const stat = statSync(join(gitDir, "index"), { bigint: true, throwIfNoEntry: false });
  if (!stat) return { seconds: 0, nanoseconds: 0 };
  return { seconds: Number(stat.mtimeNs / 1_000_000_000n), nanoseconds: Number(stat.mtimeNs % 1_000_000_000n) };
}

function isRacy(entry: IndexEntry, index: { seconds: number; nanoseconds: number }): boolean {
  if (entry.mtimeSeconds !== index.seconds) return entry.mtimeSeconds > index.seconds;
  return entry.mtimeNanoseconds >= index.nanoseconds;
}

/**
 * The tree of a commit: from memory, else from its loose object. The object
 * must still be there (a commit on a parent that is gone would make a broken
 * history); a packed one is left to git.
 */
function treeOf(gitDir: string, commit: string): string {
  const known = headTrees.get(gitDir);
  if (known?.commit === commit && hasLooseObject(gitDir, commit)) return known.tree;
  const object = readLooseObject(gitDir, commit);
  if (!object) {
    if (safeReaddir(join(gitDir, "objects", "pack")).some((name) => name.endsWith(".pack")))
      throw new UnsupportedIndexError(`commit ${commit} is packed`);
    throw new Error(`the commit HEAD points at (${commit}) is missing from ${join(gitDir, "objects")}`);
  }
  if (object.type !== "commit") throw new Error(`HEAD points at a ${object.type}, not a commit`);
  const tree = /^tree ([0-9a-f]{40})\n/.exec(object.content.toString("latin1"))?.[1];
  if (tree === undefined) throw new UnsupportedIndexError(`commit ${commit} names no tree`);
  remember(headTrees, gitDir, { commit, tree });
  return tree;
}

/** Why a node file in history/ must not be committed, or null (any other file is committed as it is). */
function nodeFileProblem(path: string, content: Buffer): string | null {
  const [folder, name, ...rest] = path.split("/");
  if (folder !== "history" || name === undefined || rest.length > 0) return null;
  const parsed = parseNodeFileName(name);
  if (!parsed) return null;
  const node = parseNodeText(content.toString("utf8"), parsed.seq);
  return typeof node === "string" ? node : null;
}

/** A commit object's text, as `git commit -m` writes it (message cleaned of trailing blanks, ending in a newline). */
export function commitBody(
  tree: string,
  parent: string | null,
  identity: CommitIdentity,
  message: string,
  now: Date,
): Buffer {
  const offsetMinutes = -now.getTimezoneOffset();
  const sign = offsetMinutes < 0 ? "-" : "+";
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, "0");
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, "0");
  const signature = `${identity.name} <${identity.email}> ${Math.floor(now.getTime() / 1000)} ${sign}${hours}${minutes}`;
  const lines = [`tree ${tree}`];
  if (parent !== null) lines.push(`parent ${parent}`);
  lines.push(`author ${signature}`, `committer ${signature}`, "", cleanMessage(message));
  return Buffer.from(lines.join("\n"), "utf8");
}

/** git's "whitespace" cleanup of a `-m` message: trailing spaces and blank lines at the ends dropped, runs of blank lines made one. */
function cleanMessage(message: string): string {
  const lines = message.split("\n").map((line) => line.replace(/\s+$/, ""));
  const kept: string[] = [];
  for (const line of lines) if (line !== "" || (kept.length > 0 && kept[kept.length - 1] !== "")) kept.push(line);
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  return `${kept.length > 0 ? kept.join("\n") : "turn"}\n`;
}

/**
 * The repository must need nothing but what this writer does: no hook that
 * git would run at commit, no ignore or attributes rules beyond ours. Checked
 * once per repository and process.
 */
function checkRepositorySettings(gitDir: string): void {
  if (checkedRepositories.has(gitDir)) return;
  const exclude = readOrEmpty(join(gitDir, "info", "exclude"));
  for (const line of exclude.split("\n")) {
    const rule = line.trim();
    if (rule !== "" && !rule.startsWith("#") && !GIT_EXCLUDES.includes(rule))
      throw new UnsupportedIndexError(`.git/info/exclude has the rule ${rule}`);
  }
  if (existsSync(join(gitDir, "info", "attributes"))) throw new UnsupportedIndexError(".git/info/attributes exists");
  const hooks = safeReaddir(join(gitDir, "hooks")).filter((name) => !name.endsWith(".sample"));
  if (hooks.length > 0) throw new UnsupportedIndexError(`hooks ${hooks.join(", ")}`);
  const config = readOrEmpty(join(gitDir, "config")).toLowerCase();
  for (const setting of [
    "excludesfile",
    "attributesfile",
    "autocrlf = true",
    "autocrlf = input",
    "hookspath",
    "[filter",
  ])
    if (config.includes(setting)) throw new UnsupportedIndexError(`.git/config sets ${setting}`);
  if (existsSync(join(gitDir, "MERGE_HEAD"))) throw new UnsupportedIndexError("a merge is in progress");
  remember(checkedRepositories, gitDir);
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function remember<V>(cache: Map<string, V> | Set<string>, key: string, value?: V): void {
  if (cache.size >= MAX_CACHED) cache.clear();
  if (cache instanceof Map) cache.set(key, value as V);
  else cache.add(key);
}
