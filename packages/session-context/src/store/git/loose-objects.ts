import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { mkdir, open, rename, unlink } from "node:fs/promises";
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
  mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE });
  const temporary = join(folder, `tmp_obj_${randomHex(8)}`);
  const compressed = deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 });
  const fd = openSync(temporary, "wx", OBJECT_MODE);
  try {
    writeSync(fd, compressed);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(fd);
  renameSync(temporary, target);
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
 * all at once on libuv's thread pool instead of one synchronous rename after
 * another on the event loop: each object is its own file, so their order does
 * not matter, and the caller writes the index and the ref only after every one
 * of them is in place. `folders` remembers the fan-out folders known to exist.
 */
export async function writeLooseObjects(
  gitDir: string,
  objects: readonly PendingObject[],
  folders: Set<string>,
): Promise<void> {
  await Promise.all(objects.map((object) => writeOne(gitDir, object, folders)));
}

async function writeOne(gitDir: string, object: PendingObject, folders: Set<string>): Promise<void> {
  const fanOut = object.id.slice(0, 2);
  const folder = join(gitDir, "objects", fanOut);
  if (!folders.has(fanOut)) {
    await mkdir(folder, { recursive: true, mode: DIRECTORY_MODE });
    folders.add(fanOut);
  }
  const temporary = join(folder, `tmp_obj_${randomHex(8)}`);
  const header = Buffer.from(`${object.type} ${object.content.length}\0`);
  const compressed = deflateSync(Buffer.concat([header, object.content]), { level: 1 });
  let handle;
  try {
    handle = await open(temporary, "wx", OBJECT_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    // `git gc` removes fan-out folders it emptied: make it again.
    await mkdir(folder, { recursive: true, mode: DIRECTORY_MODE });
    handle = await open(temporary, "wx", OBJECT_MODE);
  }
  try {
    await handle.writeFile(compressed);
  } catch (error) {
    await handle.close();
    await unlink(temporary);
    throw error;
  }
  await handle.close();
  // Over an object already there (the same bytes, by its id) the rename changes nothing a reader could see.
  await rename(temporary, join(folder, object.id.slice(2)));
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
