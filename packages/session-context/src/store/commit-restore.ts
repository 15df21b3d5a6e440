import { mkdirSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { DIR_MODE } from "./atomic-file.js";
import { fsyncFolderSync, writeDurablySync } from "./durable-write-sync.js";
import { committedFiles, readObject } from "./git/committed-files.js";
import { parseNodeFileName, type SessionPaths } from "./layout.js";
import { parseNodeText } from "./node-text.js";
import { NotRegularFileError, readRegularFile } from "./safe-open.js";
import { isWalTarget, tornByCut } from "./wal-target.js";

/** What the commit put back after a reboot: one entry per file. */
export interface CommitRestore {
  /** Relative to the session folder. */
  readonly rel: string;
  readonly reason: "missing" | "torn" | "older";
}

/**
 * After a reboot, puts back from `commit` (the one the log's marker names: its objects and ref were made
 * durable by the checkpoint, where a later HEAD's may not be) each of the session's files (meta.json and
 * history/'s node files) that a power cut took, tore, or rolled back: the checkpoint (wal-checkpoint.ts) left
 * them unsynced. Only what a cut can do is undone: a missing file, one torn as a cut tears (wal-target.ts), a
 * node file back at `running` where the commit has it finished, a meta.json older than the commit's. Any other
 * difference is a write made after the commit (ours, logged and put back by the log after this; or another
 * store's, which fsyncs its own) and stays. Synchronous: it runs before a session's history is first read.
 */
export function restoreFromCommit(paths: SessionPaths, commit: string): CommitRestore[] {
  const files = committedFiles(paths.git, commit);
  if (!files) return []; // objects a cut took after all: `sessions doctor` reports the repository
  const restored: CommitRestore[] = [];
  const folders = new Set<string>();
  const movedIds = nodeIdsOnDisk(paths);
  for (const [rel, id] of files) {
    if (!isWalTarget(rel)) continue;
    const path = join(paths.dir, rel);
    let disk: string | null;
    try {
      disk = readRegularFile(path, "utf8");
    } catch (error) {
      // A link or a FIFO in its place is the doctor's to report, never ours to replace.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT" || error instanceof NotRegularFileError) continue;
      disk = null;
    }
    if (disk !== null && !suspect(rel, disk)) continue;
    // A node now under another file name was moved there (the doctor gives a duplicated seq a fresh one), not lost.
    if (disk === null && movedIds.has(parseNodeFileName(rel.slice("history/".length))?.nodeId ?? "")) continue;
    const blob = readBlob(paths.git, id);
    if (blob === null) continue;
    const committed = blob.toString("utf8");
    const reason = disk === null ? "missing" : disk === committed ? null : undoneByCut(rel, disk, committed);
    if (reason === null) continue;
    mkdirSync(dirname(path), { recursive: true, mode: DIR_MODE });
    writeDurablySync(path, committed);
    folders.add(dirname(path));
    restored.push({ rel, reason });
  }
  for (const folder of folders) fsyncFolderSync(folder);
  return restored;
}

/** A file a cut may have changed, told without reading the commit's copy: one that does not parse, a running node, meta.json. */
function suspect(rel: string, disk: string): boolean {
  if (rel === "meta.json") return true;
  const node = parseNodeText(disk, seqOf(rel));
  return typeof node === "string" || node.metadata.status === "running";
}

/** How a cut changed a file the commit holds as `committed`, or null when the difference is a later write. */
function undoneByCut(rel: string, disk: string, committed: string): "torn" | "older" | null {
  if (tornByCut(disk, committed)) return "torn";
  if (rel === "meta.json") {
    const updatedAt = (text: string): number | null => {
      try {
        const value = (JSON.parse(text) as { updated_at?: unknown }).updated_at;
        return typeof value === "number" ? value : null;
      } catch {
        return null;
      }
    };
    const onDisk = updatedAt(disk);
    const inCommit = updatedAt(committed);
    return onDisk !== null && inCommit !== null && onDisk < inCommit ? "older" : null;
  }
  const onDisk = parseNodeText(disk, seqOf(rel));
  const inCommit = parseNodeText(committed, seqOf(rel));
  if (typeof onDisk === "string" || typeof inCommit === "string") return null;
  const finished = inCommit.metadata.status !== "running";
  return onDisk.id === inCommit.id && onDisk.metadata.status === "running" && finished ? "older" : null;
}

/** A blob's bytes, or null when it cannot be read here (a cut took or tore it too: the doctor reports it). */
function readBlob(gitDir: string, id: string): Buffer | null {
  try {
    const object = readObject(gitDir, id);
    return object?.type === "blob" ? object.content : null;
  } catch {
    return null;
  }
}

/** The node ids history/'s file names carry now. */
function nodeIdsOnDisk(paths: SessionPaths): Set<string> {
  let names: string[];
  try {
    names = readdirSync(paths.history);
  } catch {
    return new Set();
  }
  return new Set(names.flatMap((name) => parseNodeFileName(name)?.nodeId ?? []));
}

function seqOf(rel: string): number {
  return parseNodeFileName(rel.slice("history/".length))?.seq ?? 0;
}
