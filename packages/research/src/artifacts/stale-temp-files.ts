import { readdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";

/**
 * The temp file a write of `name` uses before it renames it into place:
 * `.<name>.<pid>.<random>.tmp`, beside the artifact.
 */
export function tempFileName(name: string, pid: number, random: string): string {
  return `.${name}.${pid}.${random}.tmp`;
}

/**
 * Removes the temp files of `name` in `dir` that a writer left behind when it
 * was killed between writing its temp file and renaming it (a kill -9 of a
 * research run): the resumed run writes the artifact again, and the work dir
 * must hold what an uninterrupted run leaves. A temp file of a process still
 * alive is left alone (another run may be writing); writes within this
 * process are synchronous, so none of its own is in flight.
 */
export function removeStaleTempFiles(dir: string, name: string): void {
  const prefix = `.${name}.`;
  for (const entry of readdirSync(dir)) {
    if (!entry.startsWith(prefix) || !entry.endsWith(".tmp")) continue;
    const pid = Number(entry.slice(prefix.length).split(".")[0]);
    if (!Number.isSafeInteger(pid) || pid <= 0) continue;
    if (pid !== process.pid && isAlive(pid)) continue;
    try {
      unlinkSync(join(dir, entry));
    } catch {
      // Gone already (another run cleaned it).
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
