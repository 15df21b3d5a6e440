import { closeSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { createOffThread, renameOffThread, unlinkQuietly } from "../atomic-file.js";
import { readRegularFile } from "../safe-open.js";
import { UnsupportedIndexError } from "./git-index.js";

/** The branch HEAD names and the commit it points at (null before the first commit). */
export interface HeadState {
  /** e.g. `refs/heads/main`. */
  ref: string;
  commit: string | null;
}

const SHA = /^[0-9a-f]{40}$/;
const SAFE_REF = /^refs\/heads\/[A-Za-z0-9._/-]+$/;

/**
 * Reads `.git/HEAD` and the branch it names (loose, else packed-refs). A detached HEAD is unsupported here. Each
 * file is opened without following a link or blocking on a FIFO (safe-open.ts): either is thrown, never read past.
 */
export function readHead(gitDir: string): HeadState {
  const head = readRegularFile(join(gitDir, "HEAD"), "utf8").trim();
  const match = /^ref: (\S+)$/.exec(head);
  const ref = match?.[1];
  if (ref === undefined || !SAFE_REF.test(ref) || ref.includes(".."))
    throw new UnsupportedIndexError(`HEAD is ${match ? `the ref ${ref}` : "detached"}`);
  return { ref, commit: readRef(gitDir, ref) };
}

function readRef(gitDir: string, ref: string): string | null {
  let loose: string | null = null;
  try {
    loose = readRegularFile(join(gitDir, ref), "utf8").trim();
  } catch (error) {
    // Not loose: look in packed-refs. A link or a FIFO in its place is not "not loose".
    if (!isMissing(error)) throw error;
  }
  if (loose !== null) {
    if (!SHA.test(loose)) throw new UnsupportedIndexError(`${ref} holds ${JSON.stringify(loose.slice(0, 60))}`);
    return loose;
  }
  let packed: string;
  try {
    packed = readRegularFile(join(gitDir, "packed-refs"), "utf8");
  } catch (error) {
    if (!isMissing(error)) throw error;
    return null;
  }
  for (const line of packed.split("\n")) {
    const [sha, name] = line.split(" ");
    if (name === ref && sha !== undefined && SHA.test(sha)) return sha;
  }
  return null;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "ENOTDIR";
}

/** A ref's lock, taken and holding the new id: `move` renames it over the ref, `abandon` removes it. */
export interface RefLock {
  move(): Promise<void>;
  abandon(): void;
}

/**
 * Takes the lock to point `ref` at `commit` the way git does: `<ref>.lock` created exclusively (on the thread
 * pool: a creation waits on the journal, see createOffThread) and the id written into it. Moving it renames it over
 * the ref, so a kill leaves the old ref or the new one, never a torn one; a `.lock` left behind is removed by the
 * next commit (see clearAbandonedLock) or by `sessions doctor --fix`. Split in two so that a commit takes the lock
 * while its index is renamed and moves the ref only after. Not fsynced, as git does not fsync refs by default.
 * Throws EEXIST while another writer holds the lock.
 */
export async function lockRef(gitDir: string, ref: string, commit: string): Promise<RefLock> {
  const target = join(gitDir, ref);
  const lock = `${target}.lock`;
  let fd: number;
  try {
    fd = await createOffThread(lock, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // A branch only in packed-refs has no folder of loose refs yet (made only then: two system calls a turn).
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    fd = openSync(lock, "wx", 0o600);
  }
  try {
    writeSync(fd, `${commit}\n`);
  } catch (error) {
    closeSync(fd);
    unlinkSync(lock);
    throw error;
  }
  closeSync(fd);
  return {
    // Over the old ref, on the thread pool (see renameOffThread).
    move: () => renameOffThread(lock, target),
    // Quietly: the commit is failing already and throws that error; a lock left behind is cleared as above.
    abandon: () => unlinkQuietly(lock),
  };
}
