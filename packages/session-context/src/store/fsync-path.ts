import { closeSync, fsync, openSync } from "node:fs";

/**
 * Opens `path` (a directory or a file) read-only and fsyncs it: the descriptor is opened and closed on the event
 * loop's thread (both cheap), only the flush runs on libuv's thread pool (one hop, where a FileHandle's
 * open/sync/close costs three).
 */
export async function fsyncPath(path: string): Promise<void> {
  const descriptor = openSync(path, "r");
  try {
    await fsyncDescriptor(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** fsyncPath of something that may be gone meanwhile (a file renamed over, a pack merged away): nothing to flush. */
export async function fsyncIfPresent(path: string): Promise<void> {
  try {
    await fsyncPath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** fsync(2) of an open descriptor on libuv's thread pool. */
export function fsyncDescriptor(descriptor: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(descriptor, (error) => (error ? reject(error) : resolve())));
}
