import { pinLease } from "./lease-lock.js";
import type { SessionPaths } from "./layout.js";
import { countUse } from "./use-count.js";

/**
 * How long a held node file may wait for the write that replaces it before it is renamed into place on its own:
 * as long as a nested model call's running node waits (running-node.ts), so a tool that takes longer shows as
 * running to other processes, as before.
 */
export const HELD_FILE_DELAY_MS = 10;
/** The delay in use: tests pin it (a slow machine must not decide what they see). */
export const heldFileDelay = { ms: HELD_FILE_DELAY_MS };

/** History folders with files logged and not yet in place by any store of this process, with how many reasons. */
const unplacedInProcess = new Map<string, number>();

/**
 * True while a store of this process has logged files of the session at `historyPath` that are not in place yet,
 * by design: held files, or a write whose renames run beside its append to the log (history.ts writeLogged). A
 * restore from the log must leave them to their writer.
 */
export function unplacedFilesInProcess(historyPath: string): boolean {
  return unplacedInProcess.has(historyPath);
}

/** Notes logged files of the session not in place yet, until the returned function is called. */
export function noteUnplaced(historyPath: string): () => void {
  return countUse(unplacedInProcess, historyPath);
}

/**
 * Node files a write logged without renaming them into place (AppendOptions.holdFile), by session. A plain tool's
 * running node is durable in the session's write-ahead log before the tool runs, and its file is usually replaced a
 * few milliseconds later by the tool's result: renaming both cost a file creation and a rename per tool call, and
 * creating a file is slow on some disks (1 ms under /tmp on the reference machine, holding up renames meanwhile).
 * Held files are put in place by the write that replaces them, or after HELD_FILE_DELAY_MS, or before the turn's
 * commit (NodeLog, TurnCommit); meanwhile the writer keeps the session's lock (its lease is pinned), so another
 * process that reads the session finds no file of a live write missing from its log (restore-on-read.ts). After a
 * crash, the log's recovery puts them in place like any file a crash took.
 */
export class HeldFiles {
  private readonly bySession = new Map<string, { texts: Map<string, string>; unpin: () => void; noted: () => void }>();

  /** Holds the text of `fileName`: logged, not in place. */
  hold(paths: SessionPaths, fileName: string, text: string): void {
    let held = this.bySession.get(paths.history);
    if (!held) {
      held = { texts: new Map(), unpin: pinLease(paths.lock), noted: noteUnplaced(paths.history) };
      this.bySession.set(paths.history, held);
    }
    held.texts.set(fileName, text);
  }

  /** The file is in place (renamed by a write that replaced it, or put in place): no longer held. */
  release(paths: SessionPaths, fileName: string): void {
    const held = this.bySession.get(paths.history);
    if (!held?.texts.delete(fileName) || held.texts.size > 0) return;
    this.bySession.delete(paths.history);
    held.unpin();
    held.noted();
  }

  /** Forgets the session's held files (it was deleted: nothing is left to put in place). */
  drop(paths: SessionPaths): void {
    for (const fileName of [...this.of(paths).keys()]) this.release(paths, fileName);
  }

  /** The session's held files, by file name (empty when none). */
  of(paths: SessionPaths): ReadonlyMap<string, string> {
    return this.bySession.get(paths.history)?.texts ?? NONE;
  }

  has(paths: SessionPaths): boolean {
    return this.bySession.has(paths.history);
  }
}

const NONE: ReadonlyMap<string, string> = new Map();
