import { appendFileSync, existsSync, lstatSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { GitError, UnsafeGitConfigError, UnsafeSessionPathError, type OpenProgramError } from "../errors.js";
import { assertSafeGitConfig } from "./git/git-config-check.js";
import { assertSafeRepositoryTree } from "./git/repository-tree.js";
import { UnsupportedIndexError } from "./git/git-index.js";
import { commitInProcess, forgetRepository } from "./git/in-process-commit.js";
import { initRepositoryInProcess } from "./git/init-repository.js";
import {
  GitCommandError,
  REPOSITORY_MODE,
  runGit,
  runGitOutsideRepositories,
  type GitRunOptions,
} from "./git/pinned-git.js";
import { readHead } from "./git/refs.js";
import { parseNodeText } from "./history.js";
import { GIT_EXCLUDES, parseNodeFileName, type SessionPaths } from "./layout.js";
import { reportStoreProblem } from "./registry.js";
import { chmodRegularFile, readRegularFileOrNull, writeRegularFile } from "./safe-open.js";
import { assertRealDirectories, unsafeFileError } from "./safe-paths.js";
import type { GitLogEntry } from "./types.js";

/** The identity of every commit, as the Python store writes it. */
export const GIT_AUTHOR = { name: "OpenProgram", email: "openprogram@local" };

/**
 * Settings of `git gc` only: a commit-graph, `info/refs` and `objects/info/packs` serve fetches and servers a
 * session repository never has, and in a repository of a few commits they outweighed what gc saved (the store grew).
 */
const GC_CONFIG = ["gc.writeCommitGraph=false", "repack.updateServerInfo=false"];

/**
 * git in the session's repository, pinned (git/pinned-git.ts), once its
 * config is known to hold nothing that runs programs (git-config-check.ts)
 * and `.git` no link or special file git would write through or block on
 * (git/repository-tree.ts):
 * every git command the store runs goes through here.
 */
function git(paths: SessionPaths, args: readonly string[], options?: GitRunOptions): Promise<string> {
  assertSafeRepositoryTree(paths);
  assertSafeGitConfig(paths);
  return runGit(paths, args, options);
}

/** A GitError that names the session and where to look next. */
function gitFailure(paths: SessionPaths, operation: string, error: unknown): OpenProgramError {
  if (error instanceof UnsafeGitConfigError || error instanceof UnsafeSessionPathError) return error;
  const unsafe = unsafeFileError(paths, error);
  if (unsafe instanceof UnsafeSessionPathError) return unsafe;
  const text = (error instanceof Error ? error.message : String(error)).trim();
  return new GitError(
    `git ${operation} failed in session '${paths.sessionId}' (repository ${paths.git}): ${text}. Nothing was ` +
      `committed anywhere else. Run \`openprogram sessions doctor ${paths.sessionId}\` to check its repository.`,
    { cause: error },
  );
}

/**
 * What is at `<session>/.git`: nothing yet, a directory, or something that
 * must not be written through (a symbolic link, a file such as a gitfile that
 * would send commits elsewhere).
 */
function repositoryState(paths: SessionPaths): "missing" | "directory" {
  const stat = lstatSync(paths.git, { throwIfNoEntry: false });
  if (!stat) return "missing";
  if (stat.isDirectory()) return "directory";
  if (stat.isSymbolicLink()) {
    throw new UnsafeSessionPathError(paths.sessionId, paths.git, "is a symbolic link");
  }
  throw gitFailure(paths, "open", new Error(`${paths.git} is not a directory`));
}

const prepared = new Set<string>();

/** A repository this process made whole (writeNewRepository) with the session: its first commit need not check it. */
export function rememberNewRepository(paths: SessionPaths): void {
  prepared.add(paths.dir);
}

/**
 * Creates the session repository on first use (private modes, local identity,
 * our exclusions, an empty "session init" commit), or adds our exclusions to
 * a repository made by the Python store. Call under the session lock.
 *
 * The identity is written into the new repository's config file directly
 * rather than by two `git config` calls.
 */
export async function ensureRepository(paths: SessionPaths): Promise<void> {
  const state = repositoryState(paths);
  if (prepared.has(paths.dir) && state === "directory") return;
  try {
    if (state === "missing") {
      await runGit(paths, ["init", "--quiet", `--shared=${REPOSITORY_MODE}`, "--initial-branch=main"]);
      appendFileSync(join(paths.git, "config"), `[user]\n\tname = ${GIT_AUTHOR.name}\n\temail = ${GIT_AUTHOR.email}\n`);
      writeExcludes(paths);
      makeCommitMessagePrivate(paths);
      await git(paths, ["commit", "--quiet", "--no-verify", "--allow-empty", "-m", "session init"]);
    } else {
      assertRealDirectories(paths, [paths.git, join(paths.git, "info")]);
      writeExcludes(paths);
      makeCommitMessagePrivate(paths);
    }
  } catch (error) {
    throw gitFailure(paths, state === "missing" ? "init" : "open", error);
  }
  prepared.add(paths.dir);
}

function writeExcludes(paths: SessionPaths): void {
  const infoDir = join(paths.git, "info");
  const excludePath = join(infoDir, "exclude");
  // Read and written without following a link (a link here once let a turn rewrite any file).
  const current = readRegularFileOrNull(excludePath) ?? "";
  const missing = GIT_EXCLUDES.filter((line) => !current.split("\n").includes(line));
  if (missing.length === 0) return;
  mkdirSync(infoDir, { recursive: true, mode: 0o700 });
  const separator = current === "" || current.endsWith("\n") ? "" : "\n";
  writeRegularFile(
    excludePath,
    `${current}${separator}# OpenProgram (TypeScript) bookkeeping\n${missing.join("\n")}\n`,
    0o600,
  );
}

/**
 * git rewrites `.git/COMMIT_EDITMSG` on every commit in place, with the umask
 * (core.sharedRepository does not cover it) and keeping the mode of a file
 * already there: so the file is made 0600 before git ever writes it. Through
 * its descriptor, opened without following a link: a link here is refused.
 */
function makeCommitMessagePrivate(paths: SessionPaths): void {
  const path = join(paths.git, "COMMIT_EDITMSG");
  try {
    chmodRegularFile(path, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTREG") throw unsafeFileError(paths, error);
    if (code !== "ENOENT") return; // Only a mode: a repository we cannot chmod is still one we can commit to.
    try {
      writeFileSync(path, "", { mode: 0o600, flag: "wx" });
    } catch {
      // Made by someone else meanwhile: git keeps its mode.
    }
  }
}

/** How long a git lock file may be held by someone else before it counts as abandoned. */
const GIT_LOCK_WAIT_MS = 2_000;

/**
 * Removes a git lock file (`.git/index.lock`, `.git/refs/heads/main.lock`)
 * left by a process killed in the middle of a commit. Our own git writes run
 * under the session lock, so a lock file seen here belongs to a dead
 * process, or to a foreign git (the Python store, a person) that is given a
 * moment to finish first.
 */
async function clearAbandonedLock(lock: string): Promise<void> {
  const deadline = Date.now() + GIT_LOCK_WAIT_MS;
  while (existsSync(lock)) {
    if (Date.now() > deadline) {
      rmSync(lock, { force: true });
      process.emitWarning(`Removed ${lock}, left by a git process that did not finish (killed mid-commit).`, {
        code: "OPENPROGRAM_STALE_GIT_LOCK",
      });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The lock files a commit takes: the index's and the branch's. */
function gitLockFiles(paths: SessionPaths): string[] {
  const locks = [join(paths.git, "index.lock")];
  try {
    locks.push(join(paths.git, `${readHead(paths.git).ref}.lock`));
  } catch {
    // an unusual HEAD: the git command reports it
  }
  return locks;
}

/**
 * Stages everything and commits; returns the new sha, or null when nothing
 * changed. Done in this process (git/in-process-commit.ts: no child process
 * per turn); a repository that needs more of git than that (hooks, ignore
 * files, packed history) is committed by git itself. A node file that does
 * not parse is left out of the commit (the last good version stays in git
 * for `sessions doctor --fix` to restore) and reported.
 */
export async function commitAll(
  paths: SessionPaths,
  message: string,
  /** The node files changed since this process's last commit, when known (see commitInProcess). */
  historyChanged: ReadonlySet<string> | null = null,
): Promise<string | null> {
  await ensureRepositoryInProcess(paths);
  try {
    return await commitHere(paths, message, historyChanged);
  } catch (error) {
    if (error instanceof UnsupportedIndexError) return commitWithGit(paths, message);
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw gitFailure(paths, "commit", error);
  }
  // A git lock file was there (looked for only then: two reads and two looks a turn saved). Left by a process
  // killed mid-commit, it is removed; a foreign git is given a moment to finish first.
  for (const lock of gitLockFiles(paths)) await clearAbandonedLock(lock);
  try {
    return await commitHere(paths, message);
  } catch (error) {
    if (error instanceof UnsupportedIndexError) return commitWithGit(paths, message);
    // A foreign git took the lock again between our look and our commit: let git wait its turn for us.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return commitWithGit(paths, message);
    throw gitFailure(paths, "commit", error);
  }
}

async function commitHere(
  paths: SessionPaths,
  message: string,
  historyChanged: ReadonlySet<string> | null = null,
): Promise<string | null> {
  const { commit, leftOut } = await commitInProcess(paths, message, GIT_AUTHOR, new Date(), historyChanged);
  for (const entry of leftOut) reportLeftOut(paths, entry);
  return commit;
}

/** Creates the repository in-process when it is missing (see init-repository.ts); else adds our exclusions. */
async function ensureRepositoryInProcess(paths: SessionPaths): Promise<void> {
  const state = repositoryState(paths);
  if (prepared.has(paths.dir) && state === "directory") return;
  if (state === "missing") {
    let made: boolean;
    try {
      made = initRepositoryInProcess(paths.git, paths.state, GIT_AUTHOR);
    } catch (error) {
      throw gitFailure(paths, "init", error);
    }
    if (made) {
      // Made here with our exclusions and a private COMMIT_EDITMSG: nothing of git is needed to open it (a new
      // session's first commit then starts no git and reads no exclude file). git itself may commit to it later.
      prepared.add(paths.dir);
      return;
    }
  }
  await ensureRepository(paths);
}

function reportLeftOut(paths: SessionPaths, entry: { relativePath: string; reason: string }): void {
  reportStoreProblem(
    `${join(paths.dir, entry.relativePath)} is not a valid node file (${entry.reason}); it was left out of ` +
      `the commit of session '${paths.sessionId}'. Run \`openprogram sessions doctor ${paths.sessionId} --fix\` ` +
      "to restore its last committed version.",
  );
}

/** The same commit by `git add -A` and `git commit`, for repositories the in-process writer leaves to git. */
async function commitWithGit(paths: SessionPaths, message: string): Promise<string | null> {
  await ensureRepository(paths);
  await clearAbandonedLock(join(paths.git, "index.lock"));
  let operation = "add";
  try {
    // --verbose names what was staged.
    const added = await git(paths, ["add", "-A", "--verbose"]);
    const unparsable = await unparsableNodeFiles(paths, stagedPaths(added));
    if (unparsable.length > 0) {
      operation = "reset";
      await git(paths, ["reset", "--quiet", "--", ...unparsable.map((entry) => entry.relativePath)]);
      for (const entry of unparsable) reportLeftOut(paths, entry);
    }
    operation = "commit";
    const staged = await git(paths, ["diff", "--cached", "--no-ext-diff", "--no-textconv", "--name-only", "-z"]);
    const hasHead = await git(paths, ["rev-parse", "--verify", "--quiet", "HEAD"]).then(
      () => true,
      () => false,
    );
    if (staged === "" && hasHead) return null;
    // --no-verify: no hook runs anyway (core.hooksPath=/dev/null); this says so twice.
    await git(paths, ["commit", "--quiet", "--no-verify", "--allow-empty", "-m", message]);
    return (await git(paths, ["rev-parse", "HEAD"])).trim();
  } catch (error) {
    throw gitFailure(paths, operation, error);
  }
}

/** Paths `git add --verbose` reports as added, relative to the session directory. */
function stagedPaths(output: string): string[] {
  const staged: string[] = [];
  for (const line of output.split("\n")) {
    const match = /^add '(.*)'$/.exec(line);
    if (match) staged.push(match[1] as string);
  }
  return staged;
}

/** The staged node files that do not parse as nodes, with the reason. */
async function unparsableNodeFiles(
  paths: SessionPaths,
  staged: string[],
): Promise<Array<{ relativePath: string; reason: string }>> {
  const nodeFiles = staged.filter((path) => {
    const [folder, name, ...rest] = path.split("/");
    return folder === "history" && name !== undefined && rest.length === 0 && parseNodeFileName(name) !== null;
  });
  const checked = await Promise.all(
    nodeFiles.map(async (relativePath) => {
      const seq = parseNodeFileName(relativePath.slice("history/".length))?.seq ?? 0;
      let text: string;
      try {
        text = await readFile(join(paths.dir, relativePath), "utf8");
      } catch (error) {
        return { relativePath, reason: `unreadable: ${(error as NodeJS.ErrnoException).code ?? "error"}` };
      }
      const node = parseNodeText(text, seq);
      return typeof node === "string" ? { relativePath, reason: node } : null;
    }),
  );
  return checked.filter((entry): entry is { relativePath: string; reason: string } => entry !== null);
}

/** The session's commits, newest first. */
export async function readLog(paths: SessionPaths, maxCount: number): Promise<GitLogEntry[]> {
  if (repositoryState(paths) === "missing") return [];
  try {
    // NUL between fields and commits: a message may hold any other character. No pager, diff or textconv runs.
    const text = await git(
      paths,
      [
        "log",
        "--no-ext-diff",
        "--no-textconv",
        "--no-show-signature",
        "-z",
        `--max-count=${maxCount}`,
        "--format=%H%x00%aI%x00%an%x00%ae%x00%s",
      ],
      { readOnly: true },
    );
    const fields = text.split("\0");
    const entries: GitLogEntry[] = [];
    for (let index = 0; index + 4 < fields.length; index += 5) {
      const [hash, date, name, email, message] = fields.slice(index, index + 5) as [
        string,
        string,
        string,
        string,
        string,
      ];
      entries.push({ hash: hash.replace(/^\n/, ""), date, message, author: `${name} <${email}>` });
    }
    return entries;
  } catch (error) {
    const text = (error as Error).message;
    if (/does not have any commits/.test(text)) return [];
    throw gitFailure(paths, "log", error);
  }
}

/**
 * What `git fsck` finds wrong with the repository's objects (every pack's
 * checksum, every object reachable from the branch), or null when nothing:
 * an older pack truncated by a crash breaks `git log` while the newest
 * commit still reads fine. Pinned like every call; reflogs are not walked.
 */
export async function objectProblems(paths: SessionPaths): Promise<string | null> {
  if (repositoryState(paths) === "missing") return null;
  try {
    await git(paths, ["fsck", "--no-dangling", "--no-progress", "--no-reflogs"], { readOnly: true });
    return null;
  } catch (error) {
    if (error instanceof UnsafeGitConfigError || error instanceof UnsafeSessionPathError) throw error;
    const text = error instanceof GitCommandError ? `${error.stderr}\n${error.stdout}` : (error as Error).message;
    return text.trim().split("\n").slice(0, 5).join("; ") || "git fsck failed";
  }
}

/** Paths git sees as changed or untracked (our exclusions applied); empty when clean or not a repository. */
export async function uncommittedPaths(paths: SessionPaths): Promise<string[]> {
  if (repositoryState(paths) === "missing") return [];
  try {
    const status = await git(paths, ["status", "--porcelain", "--untracked-files=all", "--no-renames"], {
      readOnly: true,
    });
    return status
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => line.slice(3));
  } catch (error) {
    throw gitFailure(paths, "status", error);
  }
}

/**
 * The committed texts of a file in the session repository, newest first
 * (HEAD's, then each earlier commit that changed it), for a repair that needs
 * the last version that still parses. Stops when `accept` returns true.
 */
export async function findCommittedVersion(
  paths: SessionPaths,
  relativePath: string,
  accept: (text: string) => boolean,
): Promise<{ text: string; commit: string } | null> {
  if (repositoryState(paths) === "missing") return null;
  let commits: string[];
  try {
    commits = (
      await git(paths, ["log", "--no-ext-diff", "--no-textconv", "--format=%H", "--", relativePath], { readOnly: true })
    )
      .split("\n")
      .filter(Boolean);
  } catch (error) {
    throw gitFailure(paths, "log", error);
  }
  for (const commit of commits) {
    let text: string;
    try {
      // cat-file: the stored bytes, never a textconv of them.
      text = await git(paths, ["cat-file", "blob", `${commit}:${relativePath}`], { readOnly: true });
    } catch (error) {
      if (error instanceof UnsafeGitConfigError) throw error;
      // The commit deleted the file: nothing to restore from this one.
      continue;
    }
    if (accept(text)) return { text, commit };
  }
  return null;
}

/** `git --version`, through the same settings as every other git call. */
export async function gitVersion(): Promise<string> {
  let text: string;
  try {
    text = await runGitOutsideRepositories(["--version"]);
  } catch (error) {
    throw new GitError("git is not installed or not on PATH", { cause: error });
  }
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!version) throw new GitError(`git --version printed ${JSON.stringify(text.trim().slice(0, 80))}`);
  return `git version ${version[1] as string}.${version[2] as string}.${version[3] as string}`;
}

/**
 * `git gc` in the session repository, pinned like every call. Plain `gc`
 * (loose objects younger than two weeks are kept), so a commit racing it from
 * a process that did not take the session lock loses nothing.
 */
export async function collectGarbage(paths: SessionPaths): Promise<void> {
  if (repositoryState(paths) === "missing") return;
  forgetRepository(paths.git);
  try {
    await git(paths, ["gc", "--quiet"], { extraConfig: GC_CONFIG });
  } catch (error) {
    throw gitFailure(paths, "gc", error);
  }
}
