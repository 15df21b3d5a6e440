import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { FILE_MODE, tempPathFor } from "./atomic-file.js";

/** Writes a file whole and durable (temp file, fsync, rename), on this thread: for a restore that cannot wait. */
export function writeDurablySync(path: string, data: string): void {
  const temporary = tempPathFor(path);
  const fd = openSync(temporary, "wx", FILE_MODE);
  try {
    const bytes = Buffer.from(data, "utf8");
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, path);
}

/** fsync of a folder, on this thread. */
export function fsyncFolderSync(folder: string): void {
  const fd = openSync(folder, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
