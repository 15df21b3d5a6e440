import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { DIR_MODE, FILE_MODE } from "./atomic-file.js";
import { fsyncDescriptor, fsyncPath } from "./fsync-path.js";
import { GIT_AUTHOR } from "./git-repo.js";
import { writeNewRepository } from "./git/init-repository.js";

/** The folders of a new session: Python OpenProgram's layout, and `.state/` for our locks and leases. */
const SESSION_FOLDERS = ["history", "context", "workdir", ".state"];

/**
 * Writes a new session whole into `building` (a hidden folder no one else
 * uses), durably: its folders, `workdir/.gitkeep` and `meta.json`, then
 * meta.json's data and the folder's names flushed. The two flushes are
 * independent (each covers what was written before it began), so they run
 * at once: one wait for the disk instead of two. The small writes are made
 * on the event loop's thread (a new file in a private folder: no waiting on
 * anyone); only the flushes go to the thread pool. The caller renames the
 * folder into place and flushes the root.
 *
 * `forTurn`: a turn starts in the session at once, so what its first turn
 * would make is made here, inside the folder that is renamed into place: the
 * git repository with its "session init" commit (as the Python store makes
 * it at creation; see init-repository.ts) and `.state/turns/` for the turn's
 * lease. Written in the hidden folder they need no building folder, rename
 * or temp files of their own. Not flushed, as git does not flush its
 * repository and the lazily made one was not flushed either: a repository a
 * crash left unreadable is reported by `sessions doctor`, and the next turn
 * makes it again.
 */
export async function writeSessionFolder(building: string, metaText: string, forTurn = false): Promise<void> {
  mkdirSync(building, { mode: DIR_MODE });
  for (const folder of SESSION_FOLDERS) mkdirSync(join(building, folder), { mode: DIR_MODE });
  writeFileSync(join(building, "workdir", ".gitkeep"), "", { mode: FILE_MODE, flag: "wx" });
  if (forTurn) {
    mkdirSync(join(building, ".state", "turns"), { mode: DIR_MODE });
    writeNewRepository(join(building, ".git"), GIT_AUTHOR);
  }
  const meta = openSync(join(building, "meta.json"), "wx", FILE_MODE);
  try {
    const data = Buffer.from(metaText, "utf8");
    for (let written = 0; written < data.length; ) written += writeSync(meta, data, written, data.length - written);
    // Settled both before meta.json's descriptor closes: a flush still running must never meet a reused descriptor.
    const flushed = await Promise.allSettled([fsyncDescriptor(meta), fsyncPath(building)]);
    for (const outcome of flushed) if (outcome.status === "rejected") throw outcome.reason;
  } finally {
    closeSync(meta);
  }
}
