import { closeSync, linkSync, openSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { StoreLockTimeoutError, StoreWriteError } from "../errors.js";
import { randomHex } from "../ids.js";
import { createOffThread, FILE_MODE } from "./atomic-file.js";
import { isHolderAlive, ownProcessStart } from "./process-liveness.js";
import { readRegularFile } from "./safe-open.js";

/**
 * Cross-process exclusive locks on lock files created with O_EXCL.
 *
 * The file names its holder (`pid host token start`, the start telling the holder from a later process given
 * the same pid: process-liveness.ts). A lock whose holder process on this host is gone, or that is older than
 * `staleMs`, is broken: that is how a store recovers from a process killed with SIGKILL while holding it.
 */
export interface LockOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** A lock older than this is considered abandoned (default 10 s). */
  staleMs?: number;
}

const HOST = hostname();
// Node has no fork(): the pid of this process never changes, and reading it is a syscall.
const PID = process.pid;

const queues = new Map<string, Promise<unknown>>();

/**
 * Runs a critical section under the lock. Callers in this process queue in
 * order (so the lock file is never contended from inside one process); other
 * processes are waited for, without blocking the event loop.
 */
export async function withLock<T>(lockPath: string, section: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  const run = previous.then(
    () => runLocked(lockPath, section, options),
    () => runLocked(lockPath, section, options),
  );
  const tail = run.catch(() => undefined);
  queues.set(lockPath, tail);
  try {
    return await run;
  } finally {
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}

async function runLocked<T>(lockPath: string, section: () => Promise<T>, options: LockOptions): Promise<T> {
  const lock = await acquireLockFile(lockPath, options);
  try {
    return await section();
  } finally {
    lock.release();
  }
}

/** A lock file this process created and may remove. */
export interface AcquiredLock {
  path: string;
  /** What the file holds (`pid host token start`): proof it is still ours. */
  content: string;
  release(): void;
}

/**
 * Creates the lock file, waiting for other processes (and breaking a stale
 * lock) without blocking the event loop. `onWait` runs each time it has to
 * wait, so the caller can tell the holder it is wanted.
 */
export async function acquireLockFile(
  lockPath: string,
  options: LockOptions & { onWait?: () => void } = {},
): Promise<AcquiredLock> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let delayMs = 0.5;
  for (;;) {
    const content = await tryAcquireOffThread(lockPath, options.staleMs ?? 120_000);
    if (content !== null) return { path: lockPath, content, release: () => release(lockPath) };
    if (Date.now() > deadline) throw new StoreLockTimeoutError(lockPath, describeHolder(lockPath));
    options.onWait?.();
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, 10);
  }
}

/**
 * The same, synchronously, for a process that is exiting (no event loop
 * left to wait on): retries for at most `timeoutMs`, sleeping the thread
 * between tries. Null when the lock could not be had in time.
 */
export function acquireLockFileSync(lockPath: string, options: LockOptions = {}): AcquiredLock | null {
  const deadline = Date.now() + (options.timeoutMs ?? 1_000);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const content = tryAcquire(lockPath, options.staleMs ?? 120_000);
    if (content !== null) return { path: lockPath, content, release: () => release(lockPath) };
    if (Date.now() > deadline) return null;
    Atomics.wait(sleeper, 0, 0, 2);
  }
}

/**
 * One try at the lock, synchronously, a stale lock broken first: the lock, or null at once while a live
 * process holds it (nothing waits: for a reader that may do without).
 */
export function tryLockFileSync(lockPath: string, options: LockOptions = {}): AcquiredLock | null {
  const staleMs = options.staleMs ?? 120_000;
  // A second try only matters when the first broke a stale lock.
  for (let attempt = 0; attempt < 2; attempt++) {
    const content = tryAcquire(lockPath, staleMs);
    if (content !== null) return { path: lockPath, content, release: () => release(lockPath) };
  }
  return null;
}

/**
 * tryAcquire with the lock file created on libuv's thread pool: a file creation waits on the file system's
 * journal, which under concurrent turns held the event loop (see createOffThread).
 */
async function tryAcquireOffThread(lockPath: string, staleMs: number): Promise<string | null> {
  const content = lockContent();
  try {
    writeLock(await createOffThread(lockPath), content);
    return content;
  } catch (error) {
    return refused(lockPath, staleMs, error);
  }
}

/** Creates the lock file; returns its content, or null when another holds it. */
function tryAcquire(lockPath: string, staleMs: number): string | null {
  const content = lockContent();
  try {
    writeLock(openSync(lockPath, "wx", FILE_MODE), content);
    return content;
  } catch (error) {
    return refused(lockPath, staleMs, error);
  }
}

/**
 * What a lock file holds: its holder (`pid host`), a token that tells this taking of it from any other, and when
 * the holder started (where that can be read).
 */
function lockContent(): string {
  const start = ownProcessStart();
  return `${PID} ${HOST} ${randomHex(12)}${start === null ? "" : ` ${start}`}\n`;
}

function writeLock(fd: number, content: string): void {
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}

/** After a creation failed: null when another holds the lock (broken first when stale), else the failure. */
function refused(lockPath: string, staleMs: number, error: unknown): null {
  if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new StoreWriteError(lockPath, error);
  breakIfStale(lockPath, staleMs);
  return null;
}

/**
 * Removes a lock file this process holds through a section that will never end (the process
 * is exiting mid-section); one held by another process is left alone.
 */
export function releaseOwnLockSync(lockPath: string): void {
  try {
    if (readRegularFile(lockPath, "utf8").startsWith(`${PID} ${HOST} `)) unlinkSync(lockPath);
  } catch {
    // gone already
  }
}

function release(lockPath: string): void {
  try {
    unlinkSync(lockPath);
  } catch {
    // broken by another process as stale: nothing to release
  }
}

/**
 * Moves a stale lock aside under a unique name, then checks that what moved is
 * the lock judged stale; if another process re-took the lock in between, its
 * lock is put back.
 */
function breakIfStale(lockPath: string, staleMs: number): void {
  const observed = readHolder(lockPath);
  if (observed === null || !isStale(lockPath, observed, staleMs)) return;
  const aside = `${lockPath}.stale-${randomHex(8)}`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return;
  }
  const moved = readHolder(aside);
  if (moved !== null && moved !== observed) {
    try {
      linkSync(aside, lockPath);
    } catch {
      // someone else holds the lock now; theirs wins
    }
  }
  release(aside);
}

function readHolder(lockPath: string): string | null {
  try {
    return readRegularFile(lockPath, "utf8");
  } catch {
    return null;
  }
}

function isStale(lockPath: string, holder: string, staleMs: number): boolean {
  const [pidText, host, , start] = holder.trim().split(" ");
  const pid = Number(pidText);
  if (host === HOST && Number.isInteger(pid) && pid > 0 && !isHolderAlive(pid, start)) return true;
  // An empty file is a holder killed between create and write.
  try {
    return Date.now() - statSync(lockPath).mtimeMs > (holder.trim() === "" ? 1_000 : staleMs);
  } catch {
    return false;
  }
}

/** This process's identity as written into lock and lease files. */
export function processIdentity(): { pid: number; host: string } {
  return { pid: PID, host: HOST };
}

function describeHolder(lockPath: string): string {
  const holder = readHolder(lockPath)?.trim();
  if (!holder) return "an unknown process";
  const [pid, host] = holder.split(" ");
  return `pid ${pid} on ${host}`;
}
