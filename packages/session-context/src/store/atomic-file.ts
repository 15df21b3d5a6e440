import { open, rename, unlink, type FileHandle } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { randomHex } from "../ids.js";

/** Mode of every file the store writes. */
export const FILE_MODE = 0o600;
/** Mode of every directory the store creates. */
export const DIR_MODE = 0o700;

const TEMP_FILE = /^\..*\.tmp-[0-9a-f]+$/;

/** True for the name of a temp file `writeFileAtomic` writes (left behind only by a write that never completed). */
export function isTempFileName(fileName: string): boolean {
  return TEMP_FILE.test(fileName);
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
  const temporary = join(directory, `.${basename(path)}.tmp-${randomHex(8)}`);
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

/** fsync of a directory: makes the names created, renamed or removed in it durable. */
export async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
