// A commit writes one pack, so a session's packs would grow by one a turn; git looks an object up in each pack in
// turn, and its own `gc --auto` (which Python's `git commit` may run) repacks past 50. So past a few packs a commit
// merges the smaller ones into one, geometrically as git's `repack --geometric=2` does: packs stay few, and over a
// 10,000-turn session each turn's objects are copied about five times in all (a simulation of the rule).
import { closeSync, readSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { noteDurablePack } from "./durable-packs.js";
import { entryType, packEntries, parsePackIndex, readdirOrEmpty, writePack, type PackEntry } from "./pack-file.js";
import { openRegularFile, readRegularFile } from "../safe-open.js";

/** Past this many packs in a repository, a commit merges the smaller ones. */
export const PACKS_BEFORE_MERGE = 16;

/** A pack of the repository: its name (`pack-<checksum>`), how many objects it holds, and its files. */
export interface PackListing {
  name: string;
  objects: number;
  /** The pack's files there, its index first and the pack last (git's `.rev`, `.bitmap` and such between). */
  files: string[];
}

/** The repository's whole packs (an index and its pack, and no `.keep`), with their object counts. */
export function listPacks(gitDir: string): PackListing[] {
  const folder = join(gitDir, "objects", "pack");
  const names = readdirOrEmpty(folder);
  const present = new Set(names);
  const packs: PackListing[] = [];
  for (const file of names) {
    if (!file.startsWith("pack-") || !file.endsWith(".idx")) continue;
    const name = file.slice(0, -".idx".length);
    if (!present.has(`${name}.pack`) || present.has(`${name}.keep`)) continue;
    const objects = objectCount(join(folder, file));
    if (objects === null) continue;
    const others = names.filter((other) => other.startsWith(`${name}.`) && other !== file && other !== `${name}.pack`);
    packs.push({ name, objects, files: [file, ...others, `${name}.pack`] });
  }
  return packs;
}

/** An index's object count (the last fan-out entry), or null when it cannot be read. */
function objectCount(indexPath: string): number | null {
  const head = Buffer.alloc(8 + 256 * 4);
  let fd: number;
  try {
    fd = openRegularFile(indexPath);
  } catch {
    return null;
  }
  try {
    if (readSync(fd, head, 0, head.length, 0) < head.length) return null;
  } finally {
    closeSync(fd);
  }
  if (head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) return null;
  return head.readUInt32BE(8 + 255 * 4);
}

/**
 * How many of the smallest packs (object counts in ascending order) to merge, as git's geometric repack chooses:
 * the larger packs that already grow by a factor of two each are kept, and the rest merged, together with each
 * next larger pack that holds fewer than twice the objects merged so far. Never fewer than two.
 */
export function packsToMerge(ascending: readonly number[]): number {
  let split = ascending.length - 1;
  while (split > 0 && ascending[split]! >= 2 * ascending[split - 1]!) split--;
  let taken = ascending.slice(0, split).reduce((sum, count) => sum + count, 0);
  while (split < ascending.length && ascending[split]! < 2 * taken) taken += ascending[split++]!;
  return Math.min(Math.max(split, 2), ascending.length);
}

/**
 * Merges the repository's smaller packs into one (see packsToMerge), when it has more than PACKS_BEFORE_MERGE.
 * Only packs of whole objects are merged (ours; a pack `git gc` wrote holds deltas and is left to git), their
 * entries copied as they are, each checked against its index's CRC-32 (a pack that fails is neither copied nor
 * removed: `sessions doctor` reports it). The new pack is fsynced before any old one is removed, each old one index
 * first: a kill in between leaves an object in two packs, which git accepts. Returns the packs left, with the
 * merged one's name (null when nothing was merged).
 */
export async function mergeSmallPacks(
  gitDir: string,
): Promise<{ packs: number; merged: string | null; from: string[] }> {
  const packs = listPacks(gitDir).sort((a, b) => a.objects - b.objects);
  if (packs.length <= PACKS_BEFORE_MERGE) return { packs: packs.length, merged: null, from: [] };
  const folder = join(gitDir, "objects", "pack");
  const chosen = packs.slice(0, packsToMerge(packs.map((pack) => pack.objects)));
  const entries = new Map<string, PackEntry>();
  const taken: PackListing[] = [];
  for (const pack of chosen) {
    let own: PackEntry[];
    try {
      const index = parsePackIndex(readRegularFile(join(folder, `${pack.name}.idx`)));
      own = packEntries(index, readRegularFile(join(folder, `${pack.name}.pack`)));
    } catch {
      continue;
    }
    if (own.some((entry) => entryType(entry.bytes).typeCode > 4)) continue;
    for (const entry of own) if (!entries.has(entry.id)) entries.set(entry.id, entry);
    taken.push(pack);
  }
  if (taken.length < 2) return { packs: packs.length, merged: null, from: [] };
  // Durable (fsynced, the pack, its index and the folder) before any source is removed: a crash after the removal
  // must not leave the only copy of those objects in the page cache. Each turn's own pack stays unsynced, as git's.
  // Off the event loop's thread: these fsyncs wait on the disk (see writePack).
  const merged = await writePack(gitDir, [...entries.values()], { durable: true });
  noteDurablePack(gitDir, merged);
  for (const pack of taken) {
    if (pack.name === merged) continue;
    for (const file of pack.files) {
      try {
        unlinkSync(join(folder, file));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  }
  return { packs: packs.length - taken.length + 1, merged, from: taken.map((pack) => pack.name) };
}
