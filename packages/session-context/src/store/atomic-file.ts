import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { randomHex } from "../ids.js";

/** Mode of every file the store writes. */
export const FILE_MODE = 0o600;
/** Mode of every directory the store creates. */
export const DIR_MODE = 0o700;

/**
 * Writes `data` so that readers see either the old file or the whole new one:
 * temp file in the same directory, fsync, rename over, fsync the directory.
 * A failure removes the temp file and leaves the old file untouched.
 */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const directory = dirname(path);
  // The temp name does not end in .json, so neither store mistakes it for a node.
  const temporary = join(directory, `.${basename(path)}.tmp-${randomHex(8)}`);
  let fd: number | undefined;
  try {
    fd = openSync(temporary, "wx", FILE_MODE);
    writeFileSync(fd, data);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(temporary, path);
    fsyncDirectory(directory);
  } catch (error) {
    if (fd !== undefined) closeQuietly(fd);
    unlinkQuietly(temporary);
    throw new StoreWriteError(path, error);
  }
}

/** Makes a rename or unlink in `directory` durable. */
export function fsyncDirectory(directory: string): void {
  const fd = openSync(directory, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed or invalid: nothing left to release
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // the temp file was never created or is already renamed
  }
}
