import { readFileSync } from "node:fs";
import { uptime } from "node:os";

let current: string | undefined;

/**
 * Names this boot of the machine: a file a process left unsynced in the page cache is lost only if the machine
 * went down since, so a record made in another boot is what tells a session's first read to check its files
 * (wal-recovery.ts). Linux says it exactly; elsewhere the boot's time, to the minute (a clock set by hand may
 * make it look like another boot: that costs one check, never a lost file).
 */
export function currentBootId(): string {
  if (current !== undefined) return current;
  try {
    current = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    // not Linux
  }
  if (!current) current = `booted-${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
  return current;
}
