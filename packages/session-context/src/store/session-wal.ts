import { closeSync, constants, fdatasync, fdatasyncSync, ftruncateSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { crc32 } from "node:zlib";
import {
  closeQuietly,
  FILE_MODE,
  renameOffThread,
  SYNC_WRITE_LIMIT,
  tempPathFor,
  unlinkQuietly,
  writeOnPool,
} from "./atomic-file.js";
import { fsyncPath } from "./fsync-path.js";
import { NotRegularFileError, readRegularFile } from "./safe-open.js";

/**
 * The session's write-ahead log, `.state/wal`: the point of durability of the files a turn writes.
 *
 * A node file (and meta.json beside it) is written as Python reads it, a temp file renamed into place, but
 * without an fsync of its own; its whole text is appended here as one record, and a write that must survive a
 * power cut (a model's reply, a tool's result, a turn's end) fdatasyncs this one file. Records are in write
 * order, so one fdatasync makes every record before it durable too. After a power cut, recovery
 * (wal-recovery.ts) puts back from the log each file the cut took or tore; a checkpoint keeps it short: into
 * the turn's commit when that holds every file the log names (wal-checkpoint.ts: the log becomes one
 * COMMITTED_MARKER record), else every file the log names fsynced and the log emptied. Git ignores it
 * (`/.state/`), Python never reads it.
 *
 * A record: the header line `<path relative to the session folder>\t<byte length>\t<CRC-32 in hex>\t<CRC-32
 * of the text it replaced, or ->\n`, then the bytes and `\n`. A record cut short or failing its CRC ends the log
 * (a write the power cut tore). Paths starting with `#` are markers, never files: COMMITTED_MARKER, VOID_MARKER.
 */
export interface WalRecord {
  /** Path relative to the session folder, with '/' (`history/0003-l-<id>.json`, `meta.json`). */
  readonly rel: string;
  readonly data: string;
  /**
   * CRC-32 of the text this write replaced on disk (null: the file was new): a file found holding that text
   * after a power cut is this write undone, and recovery puts the write back.
   */
  readonly replaces: number | null;
}

/** A log past this many bytes is checkpointed at a turn's end. */
export const WAL_CHECKPOINT_BYTES = 256 * 1024;

/** Opens for appending, creating it if needed, never through a symbolic link. */
const APPEND_NO_FOLLOW = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/** The bytes of records, as appended. */
export function encodeWalRecords(records: readonly WalRecord[]): Buffer {
  const parts: Buffer[] = [];
  for (const record of records) {
    const body = Buffer.from(record.data, "utf8");
    parts.push(
      Buffer.from(
        `${record.rel}\t${body.length}\t${crc32(body).toString(16)}\t${record.replaces === null ? "-" : record.replaces.toString(16)}\n`,
        "utf8",
      ),
      body,
      Buffer.from("\n"),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Appends the records in one write(2) (O_APPEND: a short write of another process never interleaves) and,
 * with `sync`, fdatasyncs the log before resolving: on libuv's thread pool, or with `syncHere` on this thread.
 *
 * Why on this thread: the caller passes `syncHere` when its session is all the process is writing
 * (lease-lock.ts soleWriterHere), so the event loop would only wait for this fdatasync anyway, and the pool's
 * hand-off and the loop's wake-up after it cost more than the wait itself on the reference VM: the tool loop of
 * bench/tool-loop.ts took 0.88x the time with it under /var/tmp, 0.91x under /tmp and 0.96x on tmpfs (medians of
 * 6-8 processes, each alternating the two). With other sessions at work the wait goes to the pool, so that theirs
 * go on meanwhile.
 */
export async function appendWal(
  walPath: string,
  records: readonly WalRecord[],
  sync: boolean,
  syncHere = false,
): Promise<void> {
  const bytes = encodeWalRecords(records);
  const fd = openSync(walPath, APPEND_NO_FOLLOW, FILE_MODE);
  try {
    // A big node's text goes to the thread pool, as its file's does (atomic-file.ts), so the event loop keeps serving.
    if (bytes.length > SYNC_WRITE_LIMIT) await writeOnPool(fd, bytes);
    else for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    if (sync && syncHere) fdatasyncSync(fd);
    else if (sync)
      await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether a sole writer fdatasyncs its log on this thread (history.ts): benches switch it off to measure the pool's
 * placement beside it, and tests to see what a process with other sessions at work does.
 */
export const walSyncPlacement = { onLoopThread: true };

/** The whole records of the log, oldest first ([] when there is none); stops at a torn or corrupt record. */
export function readWal(walPath: string): WalRecord[] {
  let raw: Buffer;
  try {
    raw = readRegularFile(walPath);
  } catch (error) {
    // No log, or not one we wrote (a link, a FIFO planted in its place): nothing to replay from it.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ELOOP" || error instanceof NotRegularFileError) return [];
    throw error;
  }
  const records: WalRecord[] = [];
  let at = 0;
  while (at < raw.length) {
    const lineEnd = raw.indexOf(10, at);
    if (lineEnd < 0) break;
    const header = /^([^\t\n]+)\t(\d+)\t([0-9a-f]{1,8})\t(-|[0-9a-f]{1,8})$/.exec(raw.toString("utf8", at, lineEnd));
    if (!header) break;
    const length = Number(header[2]);
    const start = lineEnd + 1;
    const end = start + length;
    if (end + 1 > raw.length || raw[end] !== 10) break;
    const body = raw.subarray(start, end);
    if (crc32(body).toString(16) !== header[3]) break;
    const record = {
      rel: header[1] as string,
      data: body.toString("utf8"),
      replaces: header[4] === "-" ? null : parseInt(header[4] as string, 16),
    };
    if (record.rel === VOID_MARKER) dropVoided(records, record.data);
    else records.push(record);
    at = end + 1;
  }
  return records;
}

/**
 * The record that takes back the last record of each file it names (a JSON array of their paths): a write whose
 * text was logged but whose file could not be put in place (its rename failed, and the write failed with it), so
 * that no recovery puts the text there later. readWal leaves out both the marker and what it takes back.
 */
export const VOID_MARKER = "#void";

/** The record taking back the last record of each of `rels`. */
export function voidRecord(rels: readonly string[]): WalRecord {
  return { rel: VOID_MARKER, data: JSON.stringify(rels), replaces: null };
}

function dropVoided(records: WalRecord[], data: string): void {
  let rels: unknown;
  try {
    rels = JSON.parse(data);
  } catch {
    return;
  }
  if (!Array.isArray(rels)) return;
  for (const rel of rels) {
    for (let at = records.length - 1; at >= 0; at--) {
      if (records[at]?.rel !== rel) continue;
      records.splice(at, 1);
      break;
    }
  }
}

/** Empties the log and makes that durable (after a checkpoint made what it named durable on its own). */
export function truncateWal(walPath: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(walPath, constants.O_WRONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Promise.resolve();
    throw error;
  }
  try {
    ftruncateSync(fd, 0);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return new Promise<void>((resolve, reject) =>
    fdatasync(fd, (error) => {
      closeSync(fd);
      if (error) reject(error);
      else resolve();
    }),
  );
}

/**
 * The record a checkpoint into the commit leaves (wal-checkpoint.ts): the files the log named, and every file
 * logged before them, were not fsynced one by one; the commit holding them was made durable instead. After a
 * reboot (a boot other than the one named), a session's first read puts back from that commit what a power cut
 * took (commit-restore.ts).
 */
export const COMMITTED_MARKER = "#committed";

/** What a COMMITTED_MARKER record says. */
export interface CommittedMarker {
  readonly commit: string;
  /** The boot the files were left unsynced in (boot-id.ts). */
  readonly boot: string;
}

/** The log's last COMMITTED_MARKER, or null when it has none (every file it ever named was fsynced on its own). */
export function committedMarkerOf(records: readonly WalRecord[]): CommittedMarker | null {
  for (let at = records.length - 1; at >= 0; at--) {
    const record = records[at] as WalRecord;
    if (record.rel !== COMMITTED_MARKER) continue;
    try {
      const marker = JSON.parse(record.data) as Partial<CommittedMarker>;
      if (typeof marker.commit === "string" && typeof marker.boot === "string")
        return { commit: marker.commit, boot: marker.boot };
    } catch {
      // not ours to read: the next one back
    }
  }
  return null;
}

/** The record of a marker. */
export function markerRecord(marker: CommittedMarker): WalRecord {
  return { rel: COMMITTED_MARKER, data: JSON.stringify(marker), replaces: null };
}

/**
 * Replaces the whole log with `records`, atomically and durably: a temp file beside it, fdatasynced, renamed over
 * it, its folder fsynced. A power cut at any point leaves the old log or the new one, never an empty log that
 * lost a marker. Under the session lock (appends are made under it too, so none lands in the old file).
 */
export async function replaceWal(walPath: string, records: readonly WalRecord[]): Promise<void> {
  const temporary = tempPathFor(walPath);
  const fd = openSync(temporary, "wx", FILE_MODE);
  try {
    const bytes = encodeWalRecords(records);
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    await new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
  } catch (error) {
    closeQuietly(fd);
    unlinkQuietly(temporary);
    throw error;
  }
  closeSync(fd);
  await renameOffThread(temporary, walPath);
  await fsyncPath(dirname(walPath));
}

/** appendWal for a caller that cannot wait (a session's first read): one write, fdatasynced on this thread. */
export function appendWalSync(walPath: string, records: readonly WalRecord[]): void {
  const fd = openSync(walPath, APPEND_NO_FOLLOW, FILE_MODE);
  try {
    const bytes = encodeWalRecords(records);
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
