import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { currentBootId } from "./boot-id.js";
import { committedFiles } from "./git/committed-files.js";
import { durableGitFiles } from "./git/durable-packs.js";
import { hashObject } from "./git/loose-objects.js";
import { readdirOrEmpty } from "./git/pack-file.js";
import { readHead, type HeadState } from "./git/refs.js";
import { fsyncIfPresent, fsyncPath } from "./fsync-path.js";
import type { SessionPaths } from "./layout.js";
import { markerRecord, replaceWal, type WalRecord } from "./session-wal.js";
import { isWalTarget } from "./wal-target.js";

/**
 * A checkpoint into the commit: when HEAD holds every file the log names exactly as last logged (a turn's end,
 * right after its commit), the repository's packs and branch are made durable instead of each of those files,
 * and the log is replaced by one COMMITTED_MARKER record. A long session's checkpoint then costs a few fsyncs
 * (the packs made since the last, the ref, two folders) where fsyncing every logged file cost one per node the
 * session wrote since (measured in the peers' agent turn: 5.8 fsyncs a turn, more than the fdatasyncs the
 * turns themselves make). The node files stay unsynced: after a reboot, a session's first read puts back from
 * the commit the marker names each one a power cut took, tore or rolled back (commit-restore.ts); the log holds
 * what was written after it.
 *
 * Returns false, having changed nothing, when HEAD does not hold what the log holds (a file left out of the
 * commit, another writer's text, a repository only git can read, loose objects git wrote): the caller then
 * checkpoints file by file. Under the session lock.
 */
export async function checkpointIntoCommit(paths: SessionPaths, records: readonly WalRecord[]): Promise<boolean> {
  let head: HeadState;
  try {
    head = readHead(paths.git);
  } catch {
    return false;
  }
  if (head.commit === null || hasLooseObjects(paths.git)) return false;
  const committed = committedFiles(paths.git, head.commit);
  if (!committed) return false;
  const latest = new Map<string, string>();
  for (const record of records) if (isWalTarget(record.rel)) latest.set(record.rel, record.data);
  for (const [rel, data] of latest)
    if (committed.get(rel) !== hashObject("blob", Buffer.from(data, "utf8"))) return false;
  await makeCommitDurable(paths, head);
  await replaceWal(paths.wal, [markerRecord({ commit: head.commit, boot: currentBootId() })]);
  return true;
}

/**
 * fsyncs what HEAD's files need to be read back after a power cut: every pack not known durable, the branch's
 * ref, and their folders; the first time in this process also HEAD, config and the folders above them (git does
 * not flush what `git init` writes, nor do we when a session is made).
 */
async function makeCommitDurable(paths: SessionPaths, head: HeadState): Promise<void> {
  const gitDir = paths.git;
  const durable = durableGitFiles(gitDir);
  const packFolder = join(gitDir, "objects", "pack");
  const packs = readdirOrEmpty(packFolder)
    .filter((name) => name.startsWith("pack-") && (name.endsWith(".pack") || name.endsWith(".idx")))
    .map((name) => join(packFolder, name))
    .filter((path) => !durable.has(path));
  const loose = join(gitDir, head.ref);
  const refs = [existsSync(loose) ? loose : join(gitDir, "packed-refs")];
  const skeleton = durable.has(gitDir) ? [] : [join(gitDir, "HEAD"), join(gitDir, "config")];
  // A file gone meanwhile (a pack `git gc` replaced, a config never written) has nothing to flush.
  await Promise.all([...packs, ...refs, ...skeleton].map(fsyncIfPresent));
  const folders = new Set([packFolder, dirname(loose)]);
  if (!durable.has(gitDir))
    for (const folder of [gitDir, join(gitDir, "objects"), join(gitDir, "refs")]) folders.add(folder);
  await Promise.all([...folders].map((folder) => fsyncPath(folder)));
  for (const path of [...packs, ...skeleton, gitDir]) durable.add(path);
}

/** True when git (not this store) wrote loose objects here: those would need an fsync each. */
function hasLooseObjects(gitDir: string): boolean {
  return readdirOrEmpty(join(gitDir, "objects")).some((name) => /^[0-9a-f]{2}$/.test(name));
}
