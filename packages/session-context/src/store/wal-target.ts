import { parseNodeFileName } from "./layout.js";

/** The only files the log may put back: meta.json and node files, never a path that leaves the session folder. */
export function isWalTarget(rel: string): boolean {
  if (rel === "meta.json") return true;
  const [folder, name, ...rest] = rel.split("/");
  return folder === "history" && rest.length === 0 && name !== undefined && parseNodeFileName(name) !== null;
}

/**
 * What a power cut leaves of a file whose data never all reached the disk: zero bytes, zeros, or the start of
 * the logged text cut at a sector's edge. A file holding anything else that does not parse was damaged some
 * other way: that is the doctor's `corrupt_node` to report and repair from git, not ours to overwrite unseen.
 */
export function tornByCut(disk: string, latest: string): boolean {
  if (disk.length === 0 || /^\0+$/.test(disk)) return true;
  const bytes = Buffer.byteLength(disk, "utf8");
  return bytes % SECTOR_BYTES === 0 && disk.length < latest.length && latest.startsWith(disk);
}

/** The unit a disk writes whole: a cut file ends at a multiple of it. */
const SECTOR_BYTES = 512;
