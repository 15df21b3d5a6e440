// Git's pack format (version 2) and its index (version 2), for the objects of one commit: two files in
// `objects/pack/` instead of a file (and often a fan-out folder) per object. On this disk a created file is the
// dearest call a commit makes (it waits on the file system's journal behind every other session's flush), and a
// turn's commit writes about seven objects.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32, deflateSync, inflateSync } from "node:zlib";
import { randomHex } from "../../ids.js";
import { closeQuietly, createOffThread, renameOffThread, syncDirectory, unlinkQuietly } from "../atomic-file.js";
import { fsyncDescriptor } from "../fsync-path.js";
import type { GitObjectType, PendingObject } from "./loose-objects.js";
import { openRegularFile, readRegularFile } from "../safe-open.js";
import { deflateReusing } from "./chunked-deflate.js";
import { resolvePackedObject } from "./pack-delta.js";

/** Mode git gives pack files in a repository shared as 0600 (read-only, private), as loose objects. */
const PACK_MODE = 0o400;
const DIRECTORY_MODE = 0o700;
const TYPE_CODES: Record<GitObjectType, number> = { commit: 1, tree: 2, blob: 3 };
const TYPE_NAMES = ["", "commit", "tree", "blob", "tag"];
const IDX_MAGIC = Buffer.from([0xff, 0x74, 0x4f, 0x63]);
/** Offsets at or past 2^31 go to the index's table of 8-byte offsets. */
const LARGE_OFFSET = 0x8000_0000;

/** One entry of a pack: the object's id, its bytes in the pack (header and compressed content) and their CRC-32. */
export interface PackEntry {
  id: string;
  bytes: Buffer;
  crc: number;
}

/** A pack entry's header: type and size, the size in 4 bits then 7 bits a byte, low bits first. */
function entryHeader(typeCode: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (typeCode << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** An object as a pack entry: never a delta, so any later pack can copy it as it is. */
export function packEntry(object: PendingObject): PackEntry {
  const bytes = Buffer.concat([
    entryHeader(TYPE_CODES[object.type], object.content.length),
    // A tree is deflated reusing what it shares with the one the last commit wrote (chunked-deflate.ts).
    object.type === "tree" ? deflateReusing(object.content) : deflateSync(object.content, { level: 1 }),
  ]);
  return { id: object.id, bytes, crc: crc32(bytes) };
}

/** The bytes of a pack of these entries (ids unique) and of its index, and the pack's name (its checksum). */
export function packFiles(entries: readonly PackEntry[]): { name: string; pack: Buffer; index: Buffer } {
  const header = Buffer.alloc(12);
  header.write("PACK", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const offsets = new Map<string, number>();
  let offset = header.length;
  for (const entry of entries) {
    offsets.set(entry.id, offset);
    offset += entry.bytes.length;
  }
  const body = Buffer.concat([header, ...entries.map((entry) => entry.bytes)]);
  const checksum = createHash("sha1").update(body).digest();
  const pack = Buffer.concat([body, checksum]);
  const sorted = [...entries].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const fanout = Buffer.alloc(256 * 4);
  const counts = new Array<number>(256).fill(0);
  for (const entry of sorted) counts[parseInt(entry.id.slice(0, 2), 16)]! += 1;
  let running = 0;
  for (let byte = 0; byte < 256; byte++) {
    running += counts[byte]!;
    fanout.writeUInt32BE(running, byte * 4);
  }
  const ids = Buffer.concat(sorted.map((entry) => Buffer.from(entry.id, "hex")));
  const crcs = Buffer.alloc(sorted.length * 4);
  const small = Buffer.alloc(sorted.length * 4);
  const large: Buffer[] = [];
  sorted.forEach((entry, index) => {
    crcs.writeUInt32BE(entry.crc, index * 4);
    const at = offsets.get(entry.id)!;
    if (at < LARGE_OFFSET) small.writeUInt32BE(at, index * 4);
    else {
      small.writeUInt32BE((LARGE_OFFSET | large.length) >>> 0, index * 4);
      const wide = Buffer.alloc(8);
      wide.writeBigUInt64BE(BigInt(at));
      large.push(wide);
    }
  });
  const version = Buffer.alloc(4);
  version.writeUInt32BE(2);
  const indexBody = Buffer.concat([IDX_MAGIC, version, fanout, ids, crcs, small, ...large, checksum]);
  const index = Buffer.concat([indexBody, createHash("sha1").update(indexBody).digest()]);
  return { name: `pack-${checksum.toString("hex")}`, pack, index };
}

/** A pack's two temp files, created ahead and open for writing (see createPackTemps). */
export interface PackTemps {
  pack: { path: string; fd: number };
  index: { path: string; fd: number };
}

/**
 * The two temp files of a pack, created at once on the thread pool. A commit creates them while it creates its
 * index lock, before it knows its objects: each creation waits on the file system's journal, and one wait for the
 * three instead of two in a row is a thread-pool round trip less per turn. Give them to writePack, or to
 * discardPackTemps when no pack is written after all.
 */
export async function createPackTemps(gitDir: string): Promise<PackTemps> {
  const folder = join(gitDir, "objects", "pack");
  const created = await Promise.allSettled([
    createTempOffThread(folder, "tmp_pack_"),
    createTempOffThread(folder, "tmp_idx_"),
  ]);
  const failed = created.find((outcome) => outcome.status === "rejected");
  if (failed) {
    for (const outcome of created) if (outcome.status === "fulfilled") discardTemp(outcome.value);
    throw failed.reason;
  }
  const [pack, index] = created.map(
    (outcome) => (outcome as PromiseFulfilledResult<{ path: string; fd: number }>).value,
  );
  return { pack: pack!, index: index! };
}

/** Closes and removes temps no pack was written into. */
export function discardPackTemps(temps: PackTemps): void {
  discardTemp(temps.pack);
  discardTemp(temps.index);
}

/**
 * Writes a pack of these entries into the repository as git does: each file written under a `tmp_` name and
 * renamed, so git sees a pack only once both files are whole. The two renames run at once (one thread-pool round
 * trip instead of two in a row at every commit): git uses a pack only when both its `.pack` and its `.idx` are
 * there and ignores either alone (`git fsck` passes; `git count-objects` counts it as garbage), as this store's
 * readers do (listPacks, readPackedObject), and nothing points at the pack's objects until both are in place (the
 * index and the ref move after). A kill or a failed rename between them leaves one file alone, as a kill between
 * two renames in a row did. Not fsynced unless `durable` (the pack merge's), as git does not fsync objects by
 * default: the node files are the durable record, the commit is made again from them after a crash. Each
 * creation, fsync and rename runs on libuv's thread pool (a creation and a rename wait on the file system's
 * journal: see createOffThread), so the event loop serves other sessions meanwhile. `temps`, made ahead by
 * createPackTemps, are used (and consumed, whatever happens) instead of new ones. Returns the pack's name
 * (`pack-<checksum>`).
 */
export async function writePack(
  gitDir: string,
  entries: readonly PackEntry[],
  options: { durable?: boolean; temps?: PackTemps } = {},
): Promise<string> {
  const { name, pack, index } = packFiles(entries);
  const folder = join(gitDir, "objects", "pack");
  const durable = options.durable === true;
  const temps = options.temps ?? (await createPackTemps(gitDir));
  try {
    // Both written at once (an fsync, when durable, waits on the disk), then both renamed at once.
    const written = await Promise.allSettled([
      fillTemp(temps.pack.fd, pack, durable),
      fillTemp(temps.index.fd, index, durable),
    ]);
    const failed = written.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  } catch (error) {
    unlinkQuietly(temps.pack.path);
    unlinkQuietly(temps.index.path);
    throw error;
  }
  await renameBoth(temps, join(folder, name));
  if (durable) await syncDirectory(folder);
  return name;
}

/**
 * Renames a pack's two temp files over `<base>.pack` and `<base>.idx` at once. When one fails its temp is removed
 * and the other stays, alone, as a kill between them leaves it (git and this store's readers ignore it): the
 * other may be a file of the same name that was there before (the same objects, by the pack's checksum), which
 * removing would take from commits that use it.
 */
async function renameBoth(temps: PackTemps, base: string): Promise<void> {
  const [pack, index] = await Promise.allSettled([
    renameOffThread(temps.pack.path, `${base}.pack`),
    renameOffThread(temps.index.path, `${base}.idx`),
  ]);
  if (pack.status === "rejected") unlinkQuietly(temps.pack.path);
  if (index.status === "rejected") unlinkQuietly(temps.index.path);
  if (pack.status === "rejected") throw pack.reason;
  if (index.status === "rejected") throw index.reason;
}

/** A new temp file in `folder`, created on the thread pool; `folder` is made when missing. */
async function createTempOffThread(folder: string, prefix: string): Promise<{ path: string; fd: number }> {
  const path = join(folder, `${prefix}${randomHex(8)}`);
  try {
    return { path, fd: await createOffThread(path, PACK_MODE) };
  } catch (error) {
    // A repository in the smallest layout has no objects/pack until its first pack (and git gc may remove it).
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    mkdirSync(folder, { recursive: true, mode: DIRECTORY_MODE });
    return { path, fd: openSync(path, "wx", PACK_MODE) };
  }
}

/** Writes `bytes` into a temp file and closes it (fsynced first when durable); closed on failure too. */
async function fillTemp(fd: number, bytes: Buffer, durable: boolean): Promise<void> {
  try {
    for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
    if (durable) await fsyncDescriptor(fd);
  } finally {
    closeQuietly(fd);
  }
}

function discardTemp(temp: { path: string; fd: number }): void {
  closeQuietly(temp.fd);
  unlinkQuietly(temp.path);
}

/** A pack's index, read: the ids in order, and each one's offset in the pack and CRC-32. */
export interface PackIndex {
  ids: string[];
  offsets: number[];
  crcs: number[];
}

/** Reads a version 2 index; throws on anything else (an older format, or a torn file). */
export function parsePackIndex(bytes: Buffer): PackIndex {
  if (bytes.length < 8 + 256 * 4 + 40 || !bytes.subarray(0, 4).equals(IDX_MAGIC) || bytes.readUInt32BE(4) !== 2)
    throw new Error("not a version 2 pack index");
  const count = bytes.readUInt32BE(8 + 255 * 4);
  const idsAt = 8 + 256 * 4;
  const crcsAt = idsAt + count * 20;
  const smallAt = crcsAt + count * 4;
  const largeAt = smallAt + count * 4;
  if (bytes.length < largeAt + 40) throw new Error("pack index is shorter than its object count says");
  const ids: string[] = [];
  const offsets: number[] = [];
  const crcs: number[] = [];
  for (let index = 0; index < count; index++) {
    ids.push(bytes.toString("hex", idsAt + index * 20, idsAt + index * 20 + 20));
    crcs.push(bytes.readUInt32BE(crcsAt + index * 4));
    const small = bytes.readUInt32BE(smallAt + index * 4);
    offsets.push(small & LARGE_OFFSET ? Number(bytes.readBigUInt64BE(largeAt + (small & ~LARGE_OFFSET) * 8)) : small);
  }
  return { ids, offsets, crcs };
}

/** The position of `id` in an index's sorted ids, or -1. */
export function findInIndex(index: PackIndex, id: string): number {
  let low = 0;
  let high = index.ids.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = index.ids[middle]!;
    if (at === id) return middle;
    if (at < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** Each entry's bytes in a pack (offset to the next entry's, or to the checksum), by id. */
export function packEntries(index: PackIndex, pack: Buffer): PackEntry[] {
  const order = index.offsets.map((offset, at) => ({ offset, at })).sort((a, b) => a.offset - b.offset);
  return order.map(({ offset, at }, position) => {
    const end = position + 1 < order.length ? order[position + 1]!.offset : pack.length - 20;
    const id = index.ids[at]!;
    if (offset < 12 || end <= offset) throw new TornPackError(`entry ${id} lies outside the pack`);
    const bytes = pack.subarray(offset, end);
    // Verified while copying (as git's index-pack does): a torn or flipped entry must never be copied into a pack
    // that then looks whole, under a fresh checksum.
    if (crc32(bytes) !== index.crcs[at]) throw new TornPackError(`entry ${id} fails its CRC-32`);
    return { id, bytes, crc: index.crcs[at] };
  });
}

/** A pack whose bytes do not match its index (truncated, or changed): not copied, not removed. */
export class TornPackError extends Error {}

/** An entry's type code (1-4 whole objects, 6 and 7 deltas) and where its compressed content starts. */
export function entryType(bytes: Buffer): { typeCode: number; contentAt: number } {
  let at = 0;
  const typeCode = (bytes[0]! >> 4) & 0x07;
  while (bytes[at]! & 0x80) at++;
  return { typeCode, contentAt: at + 1 };
}

/** A whole object's type and content from its entry, or null for a delta (which needs its base: resolveInPack). */
export function entryObject(bytes: Buffer): { type: string; content: Buffer } | null {
  const { typeCode, contentAt } = entryType(bytes);
  if (typeCode < 1 || typeCode > 4) return null;
  return { type: TYPE_NAMES[typeCode]!, content: inflateSync(bytes.subarray(contentAt)) };
}

/**
 * One object read from the packs of a repository, with the pack's name, or null when no pack holds it readable
 * (a torn pack: left to git, which reports it). An object git stored as a delta is rebuilt from its chain.
 */
export function readPackedObject(gitDir: string, id: string): { type: string; content: Buffer; pack: string } | null {
  const folder = join(gitDir, "objects", "pack");
  for (const name of readdirOrEmpty(folder)) {
    if (!name.startsWith("pack-") || !name.endsWith(".idx")) continue;
    let index: PackIndex;
    try {
      index = parsePackIndex(readRegularFile(join(folder, name)));
    } catch {
      continue;
    }
    const at = findInIndex(index, id);
    if (at < 0) continue;
    const end = [...index.offsets].sort((a, b) => a - b).find((offset) => offset > index.offsets[at]!);
    const pack = name.slice(0, -".idx".length);
    let object: { type: string; content: Buffer } | null;
    try {
      // Our packs hold whole objects: read the one entry. Only git's (after gc) need the pack for a delta's chain.
      object =
        readEntryAt(join(folder, `${pack}.pack`), index.offsets[at]!, end) ??
        resolveInPack(join(folder, `${pack}.pack`), index, index.offsets[at]!);
    } catch {
      continue;
    }
    // The same object may also be whole in another pack (a merge killed before it removed the packs it took).
    if (object) return { ...object, pack };
  }
  return null;
}

function readEntryAt(
  packPath: string,
  offset: number,
  end: number | undefined,
): { type: string; content: Buffer } | null {
  let fd: number;
  try {
    fd = openRegularFile(packPath);
  } catch {
    return null;
  }
  try {
    const length = (end ?? fstatSync(fd).size - 20) - offset;
    const bytes = Buffer.alloc(length);
    readSync(fd, bytes, 0, length, offset);
    return entryObject(bytes);
  } finally {
    closeSync(fd);
  }
}

/** The object at `offset` of a pack read whole, its delta chain resolved (throws on a malformed pack). */
function resolveInPack(packPath: string, index: PackIndex, offset: number): { type: string; content: Buffer } {
  const pack = readRegularFile(packPath);
  const sortedOffsets = [...index.offsets].sort((a, b) => a - b);
  return resolvePackedObject(
    {
      pack,
      sortedOffsets,
      offsetOf: (id) => {
        const at = findInIndex(index, id);
        return at < 0 ? -1 : index.offsets[at]!;
      },
    },
    offset,
  );
}

/** A folder's names, or none when it cannot be read (missing, or not a folder). */
export function readdirOrEmpty(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}
