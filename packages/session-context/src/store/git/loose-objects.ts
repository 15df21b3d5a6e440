import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { randomHex } from "../../ids.js";

/** The kinds of git object a turn writes. */
export type GitObjectType = "blob" | "tree" | "commit";

/** Mode git gives loose objects in a repository shared as 0600 (read-only, private). */
const OBJECT_MODE = 0o400;
const DIRECTORY_MODE = 0o700;

/** The object's id: SHA-1 of `<type> <size>\0<content>`, as git hashes it. */
export function hashObject(type: GitObjectType, content: Uint8Array): string {
  return createHash("sha1").update(`${type} ${content.length}\0`).update(content).digest("hex");
}

/** A loose object file's bytes: zlib of `<type> <size>\0<content>` (level 1: git reads any level). */
export function looseObjectBytes(type: GitObjectType, content: Uint8Array): Buffer {
  return deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 });
}

/**
 * Writes one loose object as git does: zlib of header and content into a
 * `tmp_obj_*` file in the object's folder, then renamed to its id. A kill
 * leaves at most a `tmp_obj_*` file, which git fsck ignores and git gc removes;
 * a rename is atomic, so an object file is always whole. An object already
 * present is not written again. Not fsynced, as git does not fsync loose
 * objects by default: the node files are the durable record, the commit is
 * made again from them after a crash. Returns the id.
 */
export function writeLooseObject(gitDir: string, type: GitObjectType, content: Uint8Array): string {
  const id = hashObject(type, content);
  const folder = join(gitDir, "objects", id.slice(0, 2));
  const target = join(folder, id.slice(2));
  if (statSync(target, { throwIfNoEntry: false })) return id;
  const makeFolder = (): void => void mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE });
  makeFolder();
  writeObjectFile(folder, { id, type, content }, makeFolder);
  return id;
}

/** An object a commit is about to write: its id is already known (hashObject). */
export interface PendingObject {
  id: string;
  type: GitObjectType;
  content: Uint8Array;
}

/**
 * Writes a commit's new objects the same way (temp file, rename to its id),
 * one after another, without first looking for each (the caller passes only
 * objects it does not know to exist; one written again is the same bytes).
 * Synchronous on purpose: done on the thread pool, each of the four steps of
 * each object cost a hand-off between threads, and measured with strace that
 * added more system time per turn than the renames it moved off the event
 * loop; done on a worker thread of their own (one message a commit), the
 * server's CPU per turn was 1.6x and its rate 0.7x in alternating rounds
 * (issue 19, BENCHMARKS.md). `folders` remembers the fan-out folders known to
 * exist.
 */
export function writeLooseObjects(gitDir: string, objects: readonly PendingObject[], folders: Set<string>): void {
  for (const object of objects) {
    const fanOut = object.id.slice(0, 2);
    const folder = join(gitDir, "objects", fanOut);
    if (!folders.has(fanOut)) {
      mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE });
      folders.add(fanOut);
    }
    writeObjectFile(folder, object, () => mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE }));
  }
}

function writeObjectFile(folder: string, object: PendingObject, makeFolder: () => void): void {
  const temporary = join(folder, `tmp_obj_${randomHex(8)}`);
  const compressed = looseObjectBytes(object.type, object.content);
  let fd: number;
  try {
    fd = openSync(temporary, "wx", OBJECT_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // `git gc` removes fan-out folders it emptied: make it again.
    makeFolder();
    fd = openSync(temporary, "wx", OBJECT_MODE);
  }
  try {
    writeSync(fd, compressed);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  // Over an object already there (the same bytes, by its id) the rename changes nothing a reader could see.
  renameSync(temporary, join(folder, object.id.slice(2)));
}

/** True when the object is stored loose in this repository. */
export function hasLooseObject(gitDir: string, id: string): boolean {
  return statSync(join(gitDir, "objects", id.slice(0, 2), id.slice(2)), { throwIfNoEntry: false }) !== undefined;
}

/** A loose object's type and content, or null when it is not a loose object here (packed, or missing). */
export function readLooseObject(gitDir: string, id: string): { type: string; content: Buffer } | null {
  let raw: Buffer;
  try {
    raw = readFileSync(join(gitDir, "objects", id.slice(0, 2), id.slice(2)));
  } catch {
    return null;
  }
  const data = inflateSync(raw);
  const space = data.indexOf(0x20);
  const nul = data.indexOf(0, space);
  return { type: data.toString("latin1", 0, space), content: data.subarray(nul + 1) };
}
