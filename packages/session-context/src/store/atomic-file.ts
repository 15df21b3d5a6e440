import {
  closeSync,
  open as openWithCallback,
  rename as renameWithCallback,
  unlinkSync,
  write,
  writeFileSync,
} from "node:fs";
import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { randomHex } from "../ids.js";
import { fsyncDescriptor, fsyncPath } from "./fsync-path.js";

/** Mode of every file the store writes. */
export const FILE_MODE = 0o600;
/** Mode of every directory the store creates. */
export const DIR_MODE = 0o700;

const TEMP_FILE = /^\..*\.tmp-[0-9a-f]+$/;

/** True for the name of a temp file `writeFileAtomic` writes (left behind only by a write that never completed). */
export function isTempFileName(fileName: string): boolean {
  return TEMP_FILE.test(fileName);
}

/** One file of a grouped durable write (see writeFilesAtomic). */
export interface FileWrite {
  path: string;
  data: string | Uint8Array;
}

/**
 * Writes `data` so that readers see either the old file or the whole new one:
 * temp file in the same directory, fsync, rename over, fsync the directory. A
 * failure removes the temp file and leaves the old file untouched. Done on
 * libuv's thread pool, so a server's event loop keeps serving while the disk
 * flushes, and concurrent writers' flushes can be grouped by the file system.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const directory = dirname(path);
  const temporary = tempPathFor(path);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temporary, "wx", FILE_MODE);
    await handle.writeFile(data);
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temporary, path);
    await syncDirectory(directory);
  } catch (error) {
    if (handle) await handle.close().catch(() => undefined);
    await unlink(temporary).catch(() => undefined);
    throw new StoreWriteError(path, error);
  }
}

/**
 * Writes several files, each as writeFileAtomic does, durable together: every
 * temp file is written, then all are fsynced at once, renamed over their names
 * in the order given, and their directories fsynced at once. Resolves once all
 * of them are durable. A reader sees each file old or whole; a crash between
 * two renames leaves the earlier files new and the later ones old, as two
 * writeFileAtomic calls in a row would (so put first what the later files
 * refer to: a node before the meta.json whose head names it).
 *
 * Why grouped: the fsyncs are what a durable write waits for, and fsyncs that
 * run at the same time share the file system's journal commit, so a node file
 * and meta.json cost about one write's wait instead of two. The fsyncs, the
 * renames (see renameOffThread), the temp files' creation (createOffThread) and
 * writes of more than SYNC_WRITE_LIMIT go to libuv's thread pool; the small
 * writes into the page cache and the closes are made on this thread, since a
 * hand-off to the pool costs more than such a call.
 */
export async function writeFilesAtomic(files: readonly FileWrite[]): Promise<void> {
  const { durable } = await renameFilesDurably(files);
  const failure = await durable;
  if (failure) throw failure;
}

/**
 * writeFilesAtomic in two steps: resolves once the files are in place (each
 * one's data durable, readers see the new files), with `durable`, which
 * resolves once their names are durable too (their folders fsynced): to null,
 * or to the error, which the caller throws (a promise that rejected while the
 * caller was busy elsewhere would be an unhandled rejection). Lets a caller
 * use what it just wrote while that last fsync runs (a turn's end commits
 * meta.json meanwhile).
 */
export async function renameFilesDurably(
  files: readonly FileWrite[],
  /** Folders whose fsync this write's covers too (names renamed earlier without one, see renameFilesInPlace). */
  alsoSync: readonly string[] = [],
): Promise<{ durable: Promise<StoreWriteError | null> }> {
  const folders = [...new Set([...(await renameFilesInPlace(files)), ...alsoSync])];
  const first = files[0]?.path ?? "";
  const durable = syncFolders(folders, first);
  return { durable };
}

/** fsyncs `folders` at once; resolves to null, or to the failure as a StoreWriteError about `path`. */
export function syncFolders(folders: readonly string[], path: string): Promise<StoreWriteError | null> {
  return Promise.all(folders.map(fsyncPath)).then(
    () => null,
    (error: unknown) => new StoreWriteError(path, error),
  );
}

/**
 * The first half of renameFilesDurably: each file's data durable and in place (renamed over its name), the
 * folders not fsynced; resolves to those folders, whose fsync makes the names durable. A crash of the process
 * loses nothing after it resolves; a power cut may lose the new names (never leaves a torn file).
 */
export async function renameFilesInPlace(
  files: readonly FileWrite[],
  /** false: not even the data is fsynced (the session's write-ahead log holds it, see session-wal.ts). */
  syncData = true,
  /** An empty file made ahead, open for writing, on the same file system (spare-files.ts), or null: create one. */
  takeSpare: () => { path: string; fd: number } | null = () => null,
): Promise<string[]> {
  return renameStaged(await stageFiles(files, syncData, takeSpare));
}

/** Files written whole beside their names (stageFiles), to be renamed over them in order (renameStaged). */
export interface StagedFiles {
  readonly entries: ReadonlyArray<{ path: string; temporary: string }>;
  /** How many of them renameStaged has put in place (the first ones). */
  renamed: number;
}

/**
 * Writes each file's data into a temp file beside its name (a spare when `takeSpare` has one), fsynced with
 * `syncData`, closed; nothing is in place yet. A failure removes the temp files and throws a StoreWriteError.
 */
export async function stageFiles(
  files: readonly FileWrite[],
  syncData = true,
  takeSpare: () => { path: string; fd: number } | null = () => null,
): Promise<StagedFiles> {
  const staged: Array<{ path: string; temporary: string; fd: number | null }> = [];
  let current = files[0]?.path ?? "";
  try {
    for (const file of files) {
      const spare = takeSpare();
      staged.push({ path: file.path, temporary: spare?.path ?? tempPathFor(file.path), fd: spare?.fd ?? null });
    }
    // The temp files no spare stood in for are created at once: one wait on the pool for all of them.
    const created = await Promise.allSettled(
      staged.map(async (entry) => {
        entry.fd ??= await createOffThread(entry.temporary);
      }),
    );
    const failed = created.findIndex((outcome) => outcome.status === "rejected");
    if (failed >= 0) {
      current = staged[failed]?.path ?? current;
      throw (created[failed] as PromiseRejectedResult).reason;
    }
    for (const [index, file] of files.entries()) {
      current = file.path;
      const fd = staged[index]?.fd as number;
      if (file.data.length <= SYNC_WRITE_LIMIT) writeFileSync(fd, file.data);
      else await writeOnPool(fd, file.data);
    }
    if (syncData) await Promise.all(staged.map((entry) => fsyncDescriptor(entry.fd as number)));
    for (const entry of staged) {
      current = entry.path;
      closeSync(entry.fd as number);
      entry.fd = null;
    }
  } catch (error) {
    for (const entry of staged) {
      if (entry.fd !== null) closeQuietly(entry.fd);
      unlinkQuietly(entry.temporary);
    }
    throw new StoreWriteError(current, error);
  }
  return { entries: staged, renamed: 0 };
}

/**
 * Renames staged files over their names, one after another in the order staged (a crash between two leaves the
 * earlier new and the later old); resolves to their folders. A failure removes the temp files not renamed and
 * throws a StoreWriteError naming the file.
 */
export async function renameStaged(staged: StagedFiles): Promise<string[]> {
  try {
    for (const entry of staged.entries.slice(staged.renamed)) {
      await renameOffThread(entry.temporary, entry.path);
      staged.renamed++;
    }
  } catch (error) {
    for (const entry of staged.entries.slice(staged.renamed)) unlinkQuietly(entry.temporary);
    throw new StoreWriteError(staged.entries[staged.renamed]?.path ?? "", error);
  }
  return [...new Set(staged.entries.map((entry) => dirname(entry.path)))];
}

/**
 * rename(2) on libuv's thread pool. Renaming over an existing file frees the old inode, and any rename waits while
 * the file system's journal commits (which concurrent fsyncs keep it doing): profiled under 50 concurrent turns,
 * the renames made on the event loop's thread held it for a third of its time, blocked rather than computing.
 * One hand-off each is far cheaper than that wait. Through node:fs's callback (as the fsyncs are), not
 * fs/promises, so that the store's turn-path renames are told apart from writeFileAtomic's (the registry's,
 * the doctor's) where tests observe them.
 */
export function renameOffThread(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => renameWithCallback(from, to, (error) => (error ? reject(error) : resolve())));
}

/**
 * Creates a new file (O_EXCL, FILE_MODE) on libuv's thread pool and resolves to its descriptor. Creating a file
 * waits for the file system's journal like a rename does: measured under the peers' agent turn, a node's temp
 * file took 0.1 to 1.2 ms to create where opening an existing file took 0.06 ms, all of it blocking the event
 * loop when made on its thread. The write into the page cache and the close that follow stay on this thread.
 */
export function createOffThread(path: string, mode: number = FILE_MODE): Promise<number> {
  return openOffThread(path, "wx", mode);
}

/** open(2) on libuv's thread pool, for an open that may create a file (see createOffThread). */
export function openOffThread(path: string, flags: string | number, mode: number = FILE_MODE): Promise<number> {
  return new Promise((resolve, reject) =>
    openWithCallback(path, flags, mode, (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

/** Writes larger than this (a big node, a registry of thousands of sessions) go to the thread pool. */
export const SYNC_WRITE_LIMIT = 256 * 1024;

/** Writes all of `data` at the fd's position from the thread pool, so the event loop keeps serving meanwhile. */
export async function writeOnPool(fd: number, data: string | Uint8Array): Promise<void> {
  const bytes = typeof data === "string" ? Buffer.from(data) : data;
  for (let offset = 0; offset < bytes.length; ) {
    offset += await new Promise<number>((resolve, reject) =>
      write(fd, bytes, offset, bytes.length - offset, null, (error, written) =>
        error ? reject(error) : resolve(written),
      ),
    );
  }
}

/** A temp file beside `path`, named as isTempFileName knows it (git ignores it, the doctor removes it). */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${randomHex(8)}`);
}

/** close(2), ignoring a descriptor already closed (on paths that are giving up anyway). */
export function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** unlink(2), ignoring a file never created or already gone. */
export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // never created, or already gone
  }
}

/** fsync of a directory: makes the names created, renamed or removed in it durable. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
