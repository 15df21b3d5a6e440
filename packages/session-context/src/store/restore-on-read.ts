import { lstatSync } from "node:fs";
import { join } from "node:path";
import { currentBootId } from "./boot-id.js";
import { restoreFromCommit } from "./commit-restore.js";
import { tryLockFileSync, type AcquiredLock } from "./file-lock.js";
import { unplacedFilesInProcess } from "./held-files.js";
import type { SessionPaths } from "./layout.js";
import { leaseHeldHere } from "./lease-lock.js";
import { reportStoreProblem } from "./registry.js";
import { SESSION_LOCK } from "./session-lock.js";
import { appendWalSync, committedMarkerOf, markerRecord, readWal, type WalRecord } from "./session-wal.js";
import { planWalRestore, restoreFromWal } from "./wal-recovery.js";

/**
 * Before a session's files are read whole: what a power cut or a crash took since the log's last checkpoint is
 * put back from it (wal-recovery.ts). One stat when there is no log. A failure is reported and the files read as
 * they are.
 *
 * Only with the session to itself: a live writer's log may name files it has not put in place yet (held files, a
 * write's renames still running beside its append: held-files.ts), and a file put back from the log while that
 * writer renames its next text over it could land last. So while a store of this process has such files of the
 * session they are left to it, and a restore runs only holding the session's lock (taken for it, or this process's
 * lease); while another live process holds it, the files are read as they are, and its write in progress shows
 * once it is done.
 */
export function restoreOnRead(paths: SessionPaths): void {
  const wal = lstatSync(paths.wal, { throwIfNoEntry: false });
  if (!wal?.isFile() || wal.size === 0 || unplacedFilesInProcess(paths.history)) return;
  const records = readRecords(paths);
  if (!records) return;
  const marker = committedMarkerOf(records);
  const afterReboot = marker !== null && marker.boot !== currentBootId();
  let needed: boolean;
  try {
    needed = afterReboot || planWalRestore(paths, records).length > 0;
  } catch (error) {
    reportStoreProblem(`The write-ahead log ${paths.wal} could not be replayed: ${(error as Error).message}`);
    return;
  }
  // Planned again with the session held: the log and the files may have moved on meanwhile.
  if (needed) withSessionHeld(paths, () => restore(paths));
}

function readRecords(paths: SessionPaths): WalRecord[] | null {
  try {
    return readWal(paths.wal);
  } catch (error) {
    reportStoreProblem(`The write-ahead log ${paths.wal} could not be read: ${(error as Error).message}`);
    return null;
  }
}

/** Runs `work` holding the session's lock, or not at all while another live process holds it. */
function withSessionHeld(paths: SessionPaths, work: () => void): void {
  if (leaseHeldHere(paths.lock)) return work();
  let lock: AcquiredLock | null;
  try {
    lock = tryLockFileSync(paths.lock, SESSION_LOCK);
  } catch (error) {
    reportStoreProblem(`${paths.dir} could not be locked to restore it from its log: ${(error as Error).message}`);
    return;
  }
  if (!lock) return;
  try {
    work();
  } finally {
    lock.release();
  }
}

function restore(paths: SessionPaths): void {
  const records = readRecords(paths);
  if (!records) return;
  try {
    // Files a checkpoint into the commit left unsynced: a reboot since may have taken them (wal-checkpoint.ts).
    const marker = committedMarkerOf(records);
    if (marker && marker.boot !== currentBootId()) {
      for (const restored of restoreFromCommit(paths, marker.commit))
        reportStoreProblem(
          `Restored ${join(paths.dir, restored.rel)} from commit ${marker.commit.slice(0, 12)} (${restored.reason} after a reboot).`,
        );
      // What is on disk now survived the reboot: checked once, not at every process's first read.
      appendWalSync(paths.wal, [markerRecord({ commit: marker.commit, boot: currentBootId() })]);
    }
  } catch (error) {
    reportStoreProblem(
      `${paths.dir} could not be checked against its last commit after a reboot: ${(error as Error).message}`,
    );
  }
  try {
    for (const restored of restoreFromWal(paths, records))
      reportStoreProblem(
        `Restored ${join(paths.dir, restored.rel)} from the write-ahead log (${restored.reason} after a crash).`,
      );
  } catch (error) {
    reportStoreProblem(`The write-ahead log ${paths.wal} could not be replayed: ${(error as Error).message}`);
  }
}
