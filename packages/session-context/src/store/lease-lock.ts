import { existsSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { FILE_MODE } from "./atomic-file.js";
import { acquireLockFile, type AcquiredLock, type LockOptions } from "./file-lock.js";
import { readRegularFile } from "./safe-open.js";
import { countUse } from "./use-count.js";

/**
 * A cross-process lock held as a lease: creating and removing a lock file
 * costs file-system journal work on every write (measured: about half a
 * millisecond per node append on the reference machine, 1.6x a raw durable
 * write), so a process keeps the lock while it is actively writing one
 * session and lets go after a short idle spell, or at once when another
 * process is waiting (it leaves a `.wanted` marker, checked after each
 * section and every LEASE_IDLE_MS while idle). Liveness stays pid-based; the holder touches the lock file while
 * it holds it, so age-based staleness never mistakes it for abandoned.
 */
interface Lease {
  path: string;
  lock: AcquiredLock | null;
  queue: Promise<unknown>;
  /** Sections queued or running; the entry is dropped only at zero, so one lock never has two queues. */
  pending: number;
  idleTimer: NodeJS.Timeout | null;
  touchedAt: number;
}

/** How often an idle lease looks for another process's `.wanted` marker (how long such a process waits at most). */
const LEASE_IDLE_MS = 20;
/**
 * How long a lease outlives its last section, while a turn of this process uses the lock (keepLeaseThroughTurn)
 * and nobody else wants it. A turn's writes come a model's reply apart (hundreds of ms): let go after each, every
 * write created and removed the lock file again, two file creations' worth of journal work per node under a
 * server's concurrent turns. Outside a turn a lease is let go at its first idle look, as before.
 */
const LEASE_KEEP_MS = 1_000;

/** Lock paths a turn of this process is using, with how many such turns. */
const turnsUsing = new Map<string, number>();
/** Locks of this process with sections queued or running (leases whose `pending` is above zero). */
let locksInUse = 0;
/** How often a held lease refreshes its lock file's mtime. */
const TOUCH_EVERY_MS = 2_000;
/** acquireLockFile's `staleMs` when none is given. */
const DEFAULT_STALE_MS = 120_000;

const leases = new Map<string, Lease>();
/** Lock paths whose lease is not let go while pinned (see pinLease), with how many pins. */
const pins = new Map<string, number>();
let exitHookInstalled = false;

/**
 * Keeps this process's lease on the lock until the returned function is called: it is not let go when another
 * process wants it, nor when idle, only when the pin is gone (or the process exits). For state the holder must
 * finish before anyone else may take the lock (a session's held node files, held-files.ts); keep it short.
 */
export function pinLease(lockPath: string): () => void {
  return countUse(pins, lockPath);
}

/** True while this process holds the lock through its lease (in a section, or idle between sections). */
export function leaseHeldHere(lockPath: string): boolean {
  return leases.get(lockPath)?.lock != null;
}

/** Runs `section` holding the lock at `lockPath`, queued behind this process's other sections on it. */
export async function withLeasedLock<T>(
  lockPath: string,
  section: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  let lease = leases.get(lockPath);
  if (!lease) {
    lease = { path: lockPath, lock: null, queue: Promise.resolve(), pending: 0, idleTimer: null, touchedAt: 0 };
    leases.set(lockPath, lease);
  }
  const current = lease;
  if (current.pending++ === 0) locksInUse++;
  const run = current.queue.then(
    () => runHeld(lockPath, current, section, options),
    () => runHeld(lockPath, current, section, options),
  );
  const done = (): void => {
    if (--current.pending === 0) locksInUse--;
  };
  current.queue = run.then(done, done);
  return run;
}

async function runHeld<T>(lockPath: string, lease: Lease, section: () => Promise<T>, options: LockOptions): Promise<T> {
  if (lease.idleTimer) {
    clearTimeout(lease.idleTimer);
    lease.idleTimer = null;
  }
  // Another process breaks a lock only when its holder is dead or its file untouched for `staleMs`: within
  // TOUCH_EVERY_MS of taking or touching it, the lock is still ours without reading it again (four system
  // calls a section, six sections a turn).
  const trustMs = Math.min(TOUCH_EVERY_MS, (options.staleMs ?? DEFAULT_STALE_MS) / 4);
  const surelyOurs = lease.lock !== null && Date.now() - lease.touchedAt <= trustMs;
  if (surelyOurs) {
    // held, touched recently
  } else if (!lease.lock || !stillOurs(lease.lock)) {
    lease.lock = await acquireLockFile(lockPath, { ...options, onWait: () => markWanted(lockPath) });
    lease.touchedAt = Date.now();
    clearWanted(lockPath);
    installExitHook();
  } else {
    // A touch that failed leaves the time as it was: the next section reads the lock again.
    if (touch(lease.lock)) lease.touchedAt = Date.now();
  }
  try {
    return await section();
  } finally {
    if (existsSync(wantedPath(lockPath))) letGo(lease);
    else keepWhileIdle(lease, Date.now());
  }
}

/**
 * True while the section holding `lockPath` is all this process is writing: no other lock of it has a section
 * queued or running, and no turn of it uses another. A write may then wait for the disk on the event loop's thread
 * (session-wal.ts), since nothing else of the store's would run meanwhile; with other sessions at work it hands the
 * wait to the pool, so that theirs go on.
 */
export function soleWriterHere(lockPath: string): boolean {
  const own = (leases.get(lockPath)?.pending ?? 0) > 0 ? 1 : 0;
  return locksInUse === own && (turnsUsing.size === 0 || (turnsUsing.size === 1 && turnsUsing.has(lockPath)));
}

/**
 * Marks the lock as used by a turn of this process until the returned function is called: its lease then
 * outlives idle gaps up to LEASE_KEEP_MS (see there).
 */
export function keepLeaseThroughTurn(lockPath: string): () => void {
  return countUse(turnsUsing, lockPath, () => {
    // The turn is over: an idle lease is let go now, so no lock file outlives the turn's return.
    const lease = leases.get(lockPath);
    if (lease?.idleTimer) letGo(lease);
  });
}

/**
 * Holds an idle lease, looking every LEASE_IDLE_MS, until another process wants the lock, or no turn of this
 * process uses it, or LEASE_KEEP_MS passed.
 */
function keepWhileIdle(lease: Lease, idleSince: number): void {
  lease.idleTimer = setTimeout(() => {
    const keepMs = turnsUsing.has(lease.path) ? LEASE_KEEP_MS : 0;
    if (Date.now() - idleSince >= keepMs || existsSync(wantedPath(lease.path))) letGo(lease);
    else keepWhileIdle(lease, idleSince);
  }, LEASE_IDLE_MS).unref();
}

function letGo(lease: Lease): void {
  if (lease.idleTimer) clearTimeout(lease.idleTimer);
  lease.idleTimer = null;
  // Pinned: held on, looking again every LEASE_IDLE_MS (the pin is brief).
  if (pins.has(lease.path) && lease.lock) return keepWhileIdle(lease, Date.now());
  if (lease.lock && stillOurs(lease.lock)) lease.lock.release();
  lease.lock = null;
  // A server touches thousands of sessions; forget the idle ones.
  if (lease.pending === 0 && leases.get(lease.path) === lease) leases.delete(lease.path);
}

/** True while the lock file still names us (it was not broken as stale by another process). */
function stillOurs(lock: AcquiredLock): boolean {
  try {
    return readRegularFile(lock.path, "utf8") === lock.content;
  } catch {
    return false;
  }
}

function touch(lock: AcquiredLock): boolean {
  try {
    const now = new Date();
    utimesSync(lock.path, now, now);
    return true;
  } catch {
    // stillOurs() notices a lost lock before the next section
    return false;
  }
}

function wantedPath(lockPath: string): string {
  return `${lockPath}.wanted`;
}

function markWanted(lockPath: string): void {
  try {
    // O_EXCL: a link at the name (even a dangling one) is never created through.
    if (!existsSync(wantedPath(lockPath))) writeFileSync(wantedPath(lockPath), "", { mode: FILE_MODE, flag: "wx" });
  } catch {
    // the holder then lets go after its idle spell instead of at once
  }
}

function clearWanted(lockPath: string): void {
  try {
    unlinkSync(wantedPath(lockPath));
  } catch {
    // nobody was waiting
  }
}

/** A process that exits holding leases leaves no lock behind (a kill -9 leaves one that is broken as stale). */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const lease of leases.values()) if (lease.lock && stillOurs(lease.lock)) lease.lock.release();
  });
}
