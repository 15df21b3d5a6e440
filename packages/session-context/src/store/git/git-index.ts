import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";

/** One entry of git's index (the staging area): a path, its blob, and the file's stat when it was hashed. */
export interface IndexEntry {
  path: string;
  id: string;
  /** 0o100644, 0o100755 or 0o120000 (symbolic link). */
  mode: number;
  ctimeSeconds: number;
  ctimeNanoseconds: number;
  mtimeSeconds: number;
  mtimeNanoseconds: number;
  dev: number;
  ino: number;
  uid: number;
  gid: number;
  size: number;
}

/** Why an index cannot be handled in-process (git itself is used for that repository then). */
export class UnsupportedIndexError extends Error {}

const SIGNATURE = "DIRC";
const ENTRY_FIXED_BYTES = 62;
const EXTENDED_FLAG = 0x4000;
const STAGE_MASK = 0x3000;

/**
 * Parses `.git/index` versions 2 and 3. Optional extensions (cache tree,
 * untracked cache: upper-case signatures) are dropped, as git allows; a
 * required extension, a merge in progress (stages) or version 4 throws
 * UnsupportedIndexError.
 */
export function parseIndex(data: Buffer): IndexEntry[] {
  if (data.length < 32 || data.toString("latin1", 0, 4) !== SIGNATURE)
    throw new UnsupportedIndexError("not a git index");
  const version = data.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new UnsupportedIndexError(`index version ${version}`);
  const checksum = createHash("sha1")
    .update(data.subarray(0, data.length - 20))
    .digest();
  if (!checksum.equals(data.subarray(data.length - 20))) throw new UnsupportedIndexError("index checksum mismatch");
  const count = data.readUInt32BE(8);
  const entries: IndexEntry[] = [];
  let offset = 12;
  for (let index = 0; index < count; index++) {
    const flags = data.readUInt16BE(offset + 60);
    if ((flags & STAGE_MASK) !== 0) throw new UnsupportedIndexError("a merge is in progress");
    const extended = (flags & EXTENDED_FLAG) !== 0;
    if (extended && data.readUInt16BE(offset + 62) !== 0)
      throw new UnsupportedIndexError("entries with extended flags (sparse or intent-to-add)");
    const nameStart = offset + ENTRY_FIXED_BYTES + (extended ? 2 : 0);
    const nameEnd = data.indexOf(0, nameStart);
    entries.push({
      ctimeSeconds: data.readUInt32BE(offset),
      ctimeNanoseconds: data.readUInt32BE(offset + 4),
      mtimeSeconds: data.readUInt32BE(offset + 8),
      mtimeNanoseconds: data.readUInt32BE(offset + 12),
      dev: data.readUInt32BE(offset + 16),
      ino: data.readUInt32BE(offset + 20),
      mode: data.readUInt32BE(offset + 24),
      uid: data.readUInt32BE(offset + 28),
      gid: data.readUInt32BE(offset + 32),
      size: data.readUInt32BE(offset + 36),
      id: data.toString("hex", offset + 40, offset + 60),
      path: data.toString("utf8", nameStart, nameEnd),
    });
    // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
    offset += (nameEnd - offset + 8) & ~7;
  }
  while (offset < data.length - 20) {
    const signature = data.toString("latin1", offset, offset + 4);
    const size = data.readUInt32BE(offset + 4);
    if (!/^[A-Z]/.test(signature)) throw new UnsupportedIndexError(`required index extension ${signature}`);
    offset += 8 + size;
  }
  return entries;
}

/** Each entry's bytes in the index, made once: an entry the commit keeps is the same object. */
const entryBytes = new WeakMap<IndexEntry, Buffer>();

/** Serialises entries (sorted by path, as git requires) as an index of version 2, with its checksum. */
export function serializeIndex(entries: readonly IndexEntry[]): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write(SIGNATURE, 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  parts.push(header);
  for (const entry of entries) {
    let bytes = entryBytes.get(entry);
    if (!bytes) {
      bytes = serializeEntry(entry);
      entryBytes.set(entry, bytes);
    }
    parts.push(bytes);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}

function serializeEntry(entry: IndexEntry): Buffer {
  const name = Buffer.from(entry.path, "utf8");
  const length = (ENTRY_FIXED_BYTES + name.length + 8) & ~7;
  const buffer = Buffer.alloc(length);
  const fields = [
    entry.ctimeSeconds,
    entry.ctimeNanoseconds,
    entry.mtimeSeconds,
    entry.mtimeNanoseconds,
    entry.dev,
    entry.ino,
    entry.mode,
    entry.uid,
    entry.gid,
    entry.size,
  ];
  fields.forEach((value, index) => buffer.writeUInt32BE(value >>> 0, index * 4));
  buffer.write(entry.id, 40, "hex");
  buffer.writeUInt16BE(Math.min(name.length, 0xfff), 60);
  name.copy(buffer, ENTRY_FIXED_BYTES);
  return buffer;
}

/** An index entry for a file with this stat and blob (every field truncated to 32 bits, as git stores it). */
export function entryFromStat(path: string, id: string, mode: number, stat: BigIntStats): IndexEntry {
  const low = (value: bigint): number => Number(value & 0xffffffffn);
  return {
    path,
    id,
    mode,
    ctimeSeconds: low(stat.ctimeNs / 1_000_000_000n),
    ctimeNanoseconds: Number(stat.ctimeNs % 1_000_000_000n),
    mtimeSeconds: low(stat.mtimeNs / 1_000_000_000n),
    mtimeNanoseconds: Number(stat.mtimeNs % 1_000_000_000n),
    dev: low(stat.dev),
    ino: low(stat.ino),
    uid: low(stat.uid),
    gid: low(stat.gid),
    size: low(stat.size),
  };
}

/** True when the file's stat still matches what was hashed into the entry (git's "stat clean" check). */
export function statMatches(entry: IndexEntry, fresh: IndexEntry): boolean {
  return (
    entry.mode === fresh.mode &&
    entry.size === fresh.size &&
    entry.mtimeSeconds === fresh.mtimeSeconds &&
    entry.mtimeNanoseconds === fresh.mtimeNanoseconds &&
    entry.ctimeSeconds === fresh.ctimeSeconds &&
    entry.ctimeNanoseconds === fresh.ctimeNanoseconds &&
    entry.ino === fresh.ino
  );
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Orders paths as git's index does: by their UTF-8 bytes. JavaScript's own
 * string order (UTF-16 code units) is the same order except where a character
 * outside the BMP (a surrogate pair) meets one above U+E000, so only such
 * paths are converted to bytes.
 */
export function comparePaths(a: string, b: string): number {
  if (a === b) return 0;
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : 1;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}
