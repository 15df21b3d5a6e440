import { readFileSync } from "node:fs";
import { currentBootId } from "./boot-id.js";

/**
 * Whether the process a lock or a lease names still runs. A pid alone can mislead: once its process is gone, the
 * system hands the number to another, and in a container restarted after a crash the new process often gets the
 * very pid the crashed one had, so the crashed turn's lease looked live for as long as the new process ran (it
 * could not resume its own session). A holder is therefore named by its pid and its start (`<boot id>/<clock
 * ticks after boot>`, Linux's /proc/<pid>/stat), and only a process with both is the holder.
 */

/** When the process `pid` started, as `<boot id>/<ticks>`; null where it cannot be read (not Linux, /proc hidden). */
export function processStart(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Field 22 (starttime), counted after the command's closing parenthesis: the command itself may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = fields[19];
  return ticks && /^\d+$/.test(ticks) ? `${currentBootId()}/${ticks}` : null;
}

let ownStart: string | null | undefined;

/** This process's start (see processStart), read once; written into the locks and leases it takes. */
export function ownProcessStart(): string | null {
  if (ownStart === undefined) ownStart = processStart(process.pid);
  return ownStart;
}

/** True when a process with this pid exists (signal 0 probes without signalling). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while the process a lock or lease of this machine names may still hold it: its pid is alive and, when the
 * file recorded the holder's start, the process with that pid now started then too. A file without a start
 * (written before it was recorded, or where it cannot be read) is judged by its pid alone, as before.
 */
export function isHolderAlive(pid: number, start: string | undefined): boolean {
  if (!isProcessAlive(pid)) return false;
  if (!start) return true;
  const now = processStart(pid);
  return now === null || now === start;
}
