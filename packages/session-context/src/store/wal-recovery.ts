import { lstatSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { crc32 } from "node:zlib";
import { DIR_MODE } from "./atomic-file.js";
import { fsyncFolderSync, writeDurablySync } from "./durable-write-sync.js";
import { fsyncIfPresent } from "./fsync-path.js";
import type { SessionPaths } from "./layout.js";
import { NotRegularFileError, readRegularFile } from "./safe-open.js";
import {
  committedMarkerOf,
  markerRecord,
  readWal,
  replaceWal,
  truncateWal,
  WAL_CHECKPOINT_BYTES,
  type WalRecord,
} from "./session-wal.js";
import { checkpointIntoCommit } from "./wal-checkpoint.js";
import { isWalTarget, tornByCut } from "./wal-target.js";

export { isWalTarget } from "./wal-target.js";

/** What the log would put back, or put back: one entry per file. */
export interface WalRestore {
  /** Relative to the session folder. */
  readonly rel: string;
  readonly reason: "missing" | "torn" | "older";
}

/**
 * The files a power cut took from the session: for each file the log names, its last logged text, when the
 * file on disk is missing (when a logged write created it), torn (empty, zeros, or the start of that text) or older: a text this log holds, or
 * one that a logged write replaced (a rename the cut undid). A file holding any other text was written by
 * someone else after us (the Python store, the doctor) and is left as it is. Only a plan: a live writer's log may
 * name files it has not put in place yet (a write's renames run beside its append, a held file waits for its next
 * write), so what it finds is restored only with the session's lock held (restore-on-read.ts, the doctor's --fix).
 */
export function planWalRestore(
  paths: SessionPaths,
  records: readonly WalRecord[] = readWal(walPath(paths)),
): Array<WalRestore & { data: string }> {
  const byRel = new Map<string, { texts: Set<string>; replaced: Set<number>; latest: string; created: boolean }>();
  for (const record of records) {
    if (!isWalTarget(record.rel)) continue;
    let entry = byRel.get(record.rel);
    if (!entry) {
      // Created by a logged write: only then can a cut leave no file at all (a rename over a file leaves one).
      const created = record.replaces === null;
      byRel.set(record.rel, (entry = { texts: new Set(), replaced: new Set(), latest: record.data, created }));
    }
    entry.texts.add(record.data);
    if (record.replaces !== null) entry.replaced.add(record.replaces);
    entry.latest = record.data;
  }
  const plan: Array<WalRestore & { data: string }> = [];
  for (const [rel, { texts, replaced, latest, created }] of byRel) {
    let disk: string | null;
    try {
      disk = readRegularFile(join(paths.dir, rel), "utf8");
    } catch (error) {
      // A link or a FIFO in its place is the doctor's to report, not ours to replace.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || error instanceof NotRegularFileError) continue;
      disk = null;
    }
    if (disk === latest) continue;
    if (disk === null) {
      if (created) plan.push({ rel, reason: "missing", data: latest });
    } else if (tornByCut(disk, latest)) plan.push({ rel, reason: "torn", data: latest });
    else if (texts.has(disk) || replaced.has(crc32(disk))) plan.push({ rel, reason: "older", data: latest });
  }
  return plan;
}

/**
 * Puts back what planWalRestore finds, each file written whole and durable (temp file, fsync, rename, folder
 * fsync), synchronously: it runs before a session's history is first read in a process. Returns what it did.
 */
export function restoreFromWal(paths: SessionPaths, records?: readonly WalRecord[]): WalRestore[] {
  const plan = planWalRestore(paths, records);
  const folders = new Set<string>();
  for (const entry of plan) {
    const path = join(paths.dir, entry.rel);
    mkdirSync(dirname(path), { recursive: true, mode: DIR_MODE });
    writeDurablySync(path, entry.data);
    folders.add(dirname(path));
  }
  for (const folder of folders) fsyncFolderSync(folder);
  return plan.map(({ rel, reason }) => ({ rel, reason }));
}

/**
 * Makes every file the log names durable on its own (fsync of each, then of their folders) and empties the
 * log, keeping its COMMITTED_MARKER if it has one (files logged before that one were never fsynced: only a
 * check against HEAD after a reboot covers them). Under the session lock. Run by the doctor, and at a turn's end
 * when the log has grown past WAL_CHECKPOINT_BYTES and HEAD does not hold what it names (checkpointWalIfLarge).
 */
export async function checkpointWal(paths: SessionPaths, records = readWal(walPath(paths))): Promise<void> {
  const rels = [...new Set(records.map((record) => record.rel).filter(isWalTarget))];
  await Promise.all(rels.map((rel) => fsyncIfPresent(join(paths.dir, rel))));
  const folders = new Set(rels.map((rel) => dirname(join(paths.dir, rel))));
  await Promise.all([...folders].map(fsyncIfPresent));
  const marker = committedMarkerOf(records);
  if (marker) await replaceWal(walPath(paths), [markerRecord(marker)]);
  else await truncateWal(walPath(paths));
}

/**
 * Checkpoints when the log is past WAL_CHECKPOINT_BYTES; true when it did. `afterCommit`: a turn's commit has
 * just been made under the same lock, so HEAD may hold every file the log names, and the checkpoint goes into
 * the commit (wal-checkpoint.ts) when it does.
 */
export async function checkpointWalIfLarge(paths: SessionPaths, afterCommit = false): Promise<boolean> {
  const stat = lstatSync(walPath(paths), { throwIfNoEntry: false });
  if (!stat?.isFile() || stat.size <= WAL_CHECKPOINT_BYTES) return false;
  const records = readWal(walPath(paths));
  if (afterCommit && (await checkpointIntoCommit(paths, records))) return true;
  await checkpointWal(paths, records);
  return true;
}

/** `<session>/.state/wal`. */
export function walPath(paths: SessionPaths): string {
  return paths.wal;
}
