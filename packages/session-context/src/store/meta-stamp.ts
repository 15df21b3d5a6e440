import { statSync } from "node:fs";
import type { SessionPaths } from "./layout.js";

/**
 * A turn's end commits meta.json with `updated_at`. When the turn's last write already was a head move that wrote
 * meta.json stamped with `updated_at` (a chat turn's reply), that file is what the end would write again, a second
 * later at most: the end keeps it instead of writing meta.json once more (a temp file, two fsyncs and a rename over
 * the old file per turn). A stamp is the state of meta.json and history/ right after that write; it holds while
 * nothing changed either since (a node written by any process of ours grows the journal and moves history/'s
 * mtime; any meta.json write replaces the file).
 */
export class MetaStamps {
  private readonly stamps = new Map<string, { updatedAt: number; key: string }>();

  /** Records that meta.json was just written with `updatedAt`, under the session lock, after the write. */
  record(paths: SessionPaths, updatedAt: number): void {
    const key = stateKey(paths);
    if (key === null) this.stamps.delete(paths.sessionId);
    else {
      if (this.stamps.size >= MAX_STAMPS && !this.stamps.has(paths.sessionId)) this.stamps.clear();
      this.stamps.set(paths.sessionId, { updatedAt, key });
    }
  }

  /** The stamped `updated_at` when meta.json and history/ are still as the stamp left them, else null. Forgets it. */
  take(paths: SessionPaths): number | null {
    const stamp = this.stamps.get(paths.sessionId);
    if (!stamp) return null;
    this.stamps.delete(paths.sessionId);
    return stateKey(paths) === stamp.key ? stamp.updatedAt : null;
  }

  /** Forgets a session's stamp (a write that leaves meta.json's `updated_at` behind the history). */
  forget(sessionId: string): void {
    this.stamps.delete(sessionId);
  }
}

/** Past this many sessions the stamps start over (a missing stamp only costs one meta.json write). */
const MAX_STAMPS = 10_000;

function stateKey(paths: SessionPaths): string | null {
  const meta = statSync(paths.meta, { bigint: true, throwIfNoEntry: false });
  const history = statSync(paths.history, { bigint: true, throwIfNoEntry: false });
  if (!meta || !history) return null;
  const journal = statSync(paths.journal, { bigint: true, throwIfNoEntry: false });
  return `${meta.ino}:${meta.size}:${meta.mtimeNs}:${meta.ctimeNs}:${history.mtimeNs}:${journal?.size ?? -1n}`;
}
