import { closeSync, fsync, openSync } from "node:fs";

/**
 * fsync of a directory, shared by callers that need it at the same time: a
 * caller is answered by an fsync that started after it called (so it covers
 * every name the caller created, renamed or removed before), and callers
 * arriving while one runs share the next one. Fifty sessions created at once
 * under one root then cost about two fsyncs of the root, not fifty (group
 * commit). The descriptor is opened and closed on the event loop's thread
 * (both are cheap); only the flush runs on libuv's thread pool.
 */
interface DirectoryGroup {
  running: Promise<void> | null;
  /** The fsync the callers arriving during `running` wait for; it starts when `running` ends. */
  next: Promise<void> | null;
}

const groups = new Map<string, DirectoryGroup>();

/** Resolves once an fsync of `directory` that began after this call has completed; rejects when that fsync fails. */
export function syncDirectoryShared(directory: string): Promise<void> {
  let group = groups.get(directory);
  if (!group) {
    group = { running: null, next: null };
    groups.set(directory, group);
  }
  if (group.next) return group.next;
  if (!group.running) return start(directory, group);
  const owner = group;
  const next = owner
    .running!.then(
      () => undefined,
      () => undefined,
    )
    .then(() => {
      owner.next = null;
      return start(directory, owner);
    });
  owner.next = next;
  return next;
}

function start(directory: string, group: DirectoryGroup): Promise<void> {
  const run = fsyncPath(directory).finally(() => {
    if (group.running === run) group.running = null;
    if (!group.running && !group.next && groups.get(directory) === group) groups.delete(directory);
  });
  group.running = run;
  return run;
}

/** Opens `path` (a directory or a file) read-only and fsyncs it on the thread pool. */
export async function fsyncPath(path: string): Promise<void> {
  const descriptor = openSync(path, "r");
  try {
    await fsyncDescriptor(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** fsync(2) of an open descriptor on libuv's thread pool: one hop, where a FileHandle's open/sync/close costs three. */
export function fsyncDescriptor(descriptor: number): Promise<void> {
  return new Promise((resolve, reject) => fsync(descriptor, (error) => (error ? reject(error) : resolve())));
}
