import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  writeFileSync,
  type BigIntStats,
  type Stats,
} from "node:fs";
import { open } from "node:fs/promises";

/**
 * Opening a store file, which is someone else's file as much as ours (a
 * sessions root is written by Python, copied, imported): never through a
 * symbolic link (O_NOFOLLOW: ELOOP), and without blocking (O_NONBLOCK: a FIFO
 * in place of meta.json or a node file would otherwise hang the open, and
 * with it the CLI or a server's event loop). What is opened must be a regular
 * file; anything else is closed again unread.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A FIFO, socket or device where a store file belongs: errno-like, so callers that report `code` keep working. */
export class NotRegularFileError extends Error {
  readonly code = "ENOTREG";
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is a ${kind}, not a regular file`);
  }
}

/** The kind of a non-regular file, in words. */
export function fileKind(stat: Stats | BigIntStats): string {
  if (stat.isSymbolicLink()) return "symbolic link";
  if (stat.isDirectory()) return "directory";
  if (stat.isFIFO()) return "FIFO";
  if (stat.isSocket()) return "socket";
  if (stat.isCharacterDevice()) return "character device";
  if (stat.isBlockDevice()) return "block device";
  return "file of an unknown kind";
}

/** Opens a store file for reading (see READ_FLAGS); throws ELOOP for a link, ENOTREG for anything not regular. */
export function openRegularFile(path: string): number {
  return openChecked(path, READ_FLAGS).fd;
}

function openChecked(path: string, flags: number, mode?: number): { fd: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags, mode);
  } catch (error) {
    // A socket cannot be opened at all (ENXIO): say what it is rather than the errno.
    const stat = (error as NodeJS.ErrnoException).code === "ENXIO" ? lstatSync(path, { throwIfNoEntry: false }) : null;
    if (stat && !stat.isFile()) throw new NotRegularFileError(path, fileKind(stat));
    throw error;
  }
  let stat: Stats;
  try {
    stat = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  if (!stat.isFile()) {
    closeSync(fd);
    throw new NotRegularFileError(path, fileKind(stat));
  }
  return { fd, stat };
}

/**
 * The whole content of a regular store file, read as openRegularFile opens it. As many system calls as
 * readFileSync(path) (open, fstat, read, close): the fstat that refuses a FIFO also sizes the buffer.
 */
export function readRegularFile(path: string): Buffer;
export function readRegularFile(path: string, encoding: "utf8"): string;
export function readRegularFile(path: string, encoding?: "utf8"): Buffer | string {
  const { fd, stat } = openChecked(path, READ_FLAGS);
  try {
    let buffer = Buffer.allocUnsafe(Math.max(stat.size, 0) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
    }
    const bytes = buffer.subarray(0, length);
    return encoding === undefined ? Buffer.from(bytes) : bytes.toString(encoding);
  } finally {
    closeSync(fd);
  }
}

/**
 * readRegularFile off the event loop's thread (the thread pool reads), for a large file on a server's request path:
 * the same refusals (a link: ELOOP; anything not a regular file: ENOTREG).
 */
export async function readRegularFileAsync(path: string): Promise<Buffer> {
  const handle = await open(path, READ_FLAGS);
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new NotRegularFileError(path, fileKind(stat));
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** readRegularFile, or null when nothing is there. */
export function readRegularFileOrNull(path: string): string | null {
  try {
    return readRegularFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

const WRITE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Writes a file in place (for a file git owns the name of, such as `.git/info/exclude`), never through a link
 * and never into anything but a regular file.
 */
export function writeRegularFile(path: string, data: string, mode: number): void {
  const { fd } = openChecked(path, WRITE_FLAGS, mode);
  try {
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/** chmod of a regular file through its descriptor: a link in its place is refused (ELOOP), never followed. */
export function chmodRegularFile(path: string, mode: number): void {
  const { fd } = openChecked(path, READ_FLAGS);
  try {
    fchmodSync(fd, mode);
  } finally {
    closeSync(fd);
  }
}

/** True for the errors these functions throw for a link or a special file where a regular file belongs. */
export function isUnsafeFileError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ELOOP" || code === "ENOTREG";
}
