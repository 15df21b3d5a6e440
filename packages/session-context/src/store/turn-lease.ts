import { closeSync, constants, mkdirSync, readdirSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { DIR_MODE, FILE_MODE, openOffThread } from "./atomic-file.js";
import { processIdentity } from "./file-lock.js";
import type { SessionPaths } from "./layout.js";
import { isOtherHostProcessAlive } from "./other-hosts.js";
import { isHolderAlive, ownProcessStart } from "./process-liveness.js";
import { readRegularFile } from "./safe-open.js";

/** Create or truncate, never through a symbolic link. */
const WRITE_NO_FOLLOW = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;

/**
 * A turn lease is a file in `.state/turns/` naming the process that runs the
 * turn (`pid host taken-at start`: process-liveness.ts). A session whose status
 * says "running" but whose leases all belong to dead processes was left behind
 * by a crash and can be recovered.
 */
export async function takeTurnLease(paths: SessionPaths, turnId: string): Promise<void> {
  const lease = join(paths.turns, leaseName(turnId));
  try {
    await writeLease(lease);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new StoreWriteError(lease, error);
    // The session's first turn here (or one written by the Python store): `.state/turns/` is made then, not
    // looked for at every turn.
    try {
      mkdirSync(paths.turns, { recursive: true, mode: DIR_MODE });
      await writeLease(lease);
    } catch (retried) {
      throw new StoreWriteError(lease, retried);
    }
  }
}

/** Not fsynced: a lease only says which live process runs the turn, and a crash that loses it is the case recovery handles. */
async function writeLease(path: string): Promise<void> {
  const { pid, host } = processIdentity();
  // Created on the thread pool: a file creation waits on the journal (see createOffThread).
  const fd = await openOffThread(path, WRITE_NO_FOLLOW, FILE_MODE);
  try {
    const start = ownProcessStart();
    writeSync(fd, `${pid} ${host} ${Date.now()}${start === null ? "" : ` ${start}`}\n`);
  } finally {
    closeSync(fd);
  }
}

/** Drops the lease; a missing lease (already recovered) is fine. */
export function releaseTurnLease(paths: SessionPaths, turnId: string): void {
  try {
    unlinkSync(join(paths.turns, leaseName(turnId)));
  } catch {
    // recovered by another process, or never taken
  }
}

/** Leases held by live processes, other than `exceptTurnId`; stale ones are removed. */
export function liveTurnLeases(paths: SessionPaths, exceptTurnId?: string): string[] {
  let names: string[];
  try {
    names = readdirSync(paths.turns);
  } catch {
    return [];
  }
  const { host: ourHost } = processIdentity();
  const live: string[] = [];
  for (const name of names) {
    if (!name.endsWith(".lease")) continue;
    const turnId = name.slice(0, -".lease".length);
    if (turnId === exceptTurnId) continue;
    let content: string;
    try {
      content = readRegularFile(join(paths.turns, name), "utf8");
    } catch {
      continue;
    }
    const [pidText, host, , start] = content.trim().split(" ");
    const pid = Number(pidText);
    // A lease cut short by a crash names no process: stale. One from another host is live unless a liveness source
    // (a cluster's replica registry) knows its process is gone.
    const readable = host !== undefined && Number.isInteger(pid) && pid > 0;
    const alive = readable && (host !== ourHost ? isOtherHostProcessAlive(host, pid) : isHolderAlive(pid, start));
    if (alive) live.push(turnId);
    else releaseTurnLease(paths, turnId);
  }
  return live;
}

/** Cheap check (one readdir) for any lease file, live or stale. */
export function hasLeaseFiles(paths: SessionPaths): boolean {
  try {
    return readdirSync(paths.turns).some((name) => name.endsWith(".lease"));
  } catch {
    return false;
  }
}

function leaseName(turnId: string): string {
  return `${turnId.replace(/[^A-Za-z0-9_-]/g, "_")}.lease`;
}
