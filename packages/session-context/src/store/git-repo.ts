import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type * as SimpleGitModule from "simple-git";
import type { SimpleGit } from "simple-git";
import { GitError } from "../errors.js";
import { GIT_EXCLUDES, type SessionPaths } from "./layout.js";
import type { GitLogEntry } from "./types.js";

/** The identity of every commit, as the Python store writes it. */
export const GIT_AUTHOR = { name: "OpenProgram", email: "openprogram@local" };

/** Settings for every git call: auto-gc and auto-maintenance would stall (or add a process to) every turn's commit. */
const GIT_CONFIG = ["commit.gpgsign=false", "core.autocrlf=false", "gc.auto=0", "maintenance.auto=false"];

/**
 * A minimal environment for git: the user's own git setup (global config with
 * signing or hooks, a GIT_DIR exported by a surrounding hook, an EDITOR) must
 * never reach session repositories.
 */
const GIT_ENVIRONMENT: Record<string, string> = {
  ...pick(["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"]),
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
};

function pick(names: string[]): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of names) {
    const value = process.env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

let library: Promise<typeof SimpleGitModule> | undefined;

/** simple-git is loaded on the first git call: listing or reading sessions never needs it. */
async function gitFor(directory: string): Promise<SimpleGit> {
  library ??= import("simple-git");
  const { simpleGit } = await library;
  // simple-git guards these variables because they can redirect git; ours point at nothing.
  return simpleGit({
    baseDir: directory,
    config: GIT_CONFIG,
    trimmed: false,
    allowEnvironment: ["GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT"],
    unsafe: { allowUnsafeConfigPaths: true },
  }).env(GIT_ENVIRONMENT);
}

const prepared = new Set<string>();

/**
 * Creates the session repository on first use (local identity, our
 * exclusions, an empty "session init" commit), or adds our exclusions to a
 * repository made by the Python store. Call under the session's commit lock.
 *
 * simple-git waits 50 ms after any git command that printed nothing, so every
 * command here is one that prints (no --quiet), and the identity is written
 * into the new repository's config file directly rather than by two silent
 * `git config` calls.
 */
export async function ensureRepository(paths: SessionPaths): Promise<SimpleGit> {
  const git = await gitFor(paths.dir);
  if (prepared.has(paths.dir) && existsSync(paths.git)) return git;
  try {
    if (!existsSync(paths.git)) {
      await git.init(["--initial-branch=main"]);
      appendFileSync(join(paths.git, "config"), `[user]\n\tname = ${GIT_AUTHOR.name}\n\temail = ${GIT_AUTHOR.email}\n`);
      writeExcludes(paths);
      await git.commit("session init", undefined, { "--allow-empty": null });
    } else {
      writeExcludes(paths);
    }
  } catch (error) {
    throw new GitError(`Could not initialise the git repository of ${paths.dir}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  prepared.add(paths.dir);
  return git;
}

function writeExcludes(paths: SessionPaths): void {
  const infoDir = join(paths.git, "info");
  const excludePath = join(infoDir, "exclude");
  const current = existsSync(excludePath) ? readFileSync(excludePath, "utf8") : "";
  const missing = GIT_EXCLUDES.filter((line) => !current.split("\n").includes(line));
  if (missing.length === 0) return;
  mkdirSync(infoDir, { recursive: true });
  const separator = current === "" || current.endsWith("\n") ? "" : "\n";
  writeFileSync(excludePath, `${current}${separator}# OpenProgram (TypeScript) bookkeeping\n${missing.join("\n")}\n`);
}

/** How long a git index lock may be held by someone else before it counts as abandoned. */
const INDEX_LOCK_WAIT_MS = 2_000;

/**
 * Removes a `.git/index.lock` left by a process killed in the middle of a git
 * command. Our own git writes run under the session's commit lock, so a lock
 * file seen here belongs to a dead process, or to a foreign git (the Python
 * store, a person) that is given a moment to finish first.
 */
async function clearAbandonedIndexLock(paths: SessionPaths): Promise<void> {
  const lock = join(paths.git, "index.lock");
  const deadline = Date.now() + INDEX_LOCK_WAIT_MS;
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

/** Stages everything and commits; returns the new sha, or null when nothing changed. */
export async function commitAll(paths: SessionPaths, message: string): Promise<string | null> {
  const git = await ensureRepository(paths);
  await clearAbandonedIndexLock(paths);
  try {
    // --verbose: see ensureRepository on simple-git's wait after silent commands.
    await git.add(["-A", "--verbose"]);
    // simple-git parses the sha from git's summary line, so no --quiet; an empty sha means nothing changed.
    const result = await git.commit(message);
    if (!result.commit) return null;
    return result.commit.length === 40 ? result.commit : (await git.revparse(["HEAD"])).trim();
  } catch (error) {
    const text = (error as Error).message;
    if (/nothing to commit|nothing added to commit|no changes added/.test(text)) return null;
    throw new GitError(`git commit failed in ${paths.dir}: ${text}`, { cause: error });
  }
}

/** The session's commits, newest first. */
export async function readLog(paths: SessionPaths, maxCount: number): Promise<GitLogEntry[]> {
  if (!existsSync(paths.git)) return [];
  try {
    const log = await (await gitFor(paths.dir)).log({ maxCount });
    return log.all.map((entry) => ({
      hash: entry.hash,
      date: entry.date,
      message: entry.message,
      author: `${entry.author_name} <${entry.author_email}>`,
    }));
  } catch (error) {
    const text = (error as Error).message;
    if (/does not have any commits/.test(text)) return [];
    throw new GitError(`git log failed in ${paths.dir}: ${text}`, { cause: error });
  }
}

/** Paths git sees as changed or untracked (our exclusions applied); empty when clean or not a repository. */
export async function uncommittedPaths(paths: SessionPaths): Promise<string[]> {
  if (!existsSync(paths.git)) return [];
  try {
    const status = await (await gitFor(paths.dir)).raw(["status", "--porcelain", "--untracked-files=all"]);
    return status
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => line.slice(3));
  } catch (error) {
    throw new GitError(`git status failed in ${paths.dir}: ${(error as Error).message}`, { cause: error });
  }
}

/** The committed (HEAD) text of a file in the session repository, or null. */
export async function committedText(paths: SessionPaths, relativePath: string): Promise<string | null> {
  if (!existsSync(paths.git)) return null;
  try {
    return await (await gitFor(paths.dir)).show([`HEAD:${relativePath}`]);
  } catch {
    return null;
  }
}

/** `git --version`, through the same settings as every other git call. */
export async function gitVersion(): Promise<string> {
  const version = await (await gitFor(process.cwd())).version();
  if (!version.installed) throw new GitError("git is not installed or not on PATH");
  return `git version ${version.major}.${version.minor}.${String(version.patch)}`;
}
