/**
 * Whether a process on another host is alive. A lease or claim written by a
 * process on this host is checked with its pid; one from another host cannot
 * be, so it counts as live unless something that knows that host says
 * otherwise: a cluster of dispatchers knows its replicas from their
 * heartbeats, and registers that knowledge here so that recovery takes over
 * the turns of a dead replica and leaves those of a live one alone.
 */
export type OtherHostLiveness = (host: string, pid: number) => boolean | undefined;

const checks = new Set<OtherHostLiveness>();

/** Adds a liveness source; returns the function that removes it. Answer undefined for a process you do not know. */
export function addOtherHostLiveness(check: OtherHostLiveness): () => void {
  checks.add(check);
  return () => void checks.delete(check);
}

/** The first source's verdict on the process; live when none knows it (the safe side: nothing is taken over). */
export function isOtherHostProcessAlive(host: string, pid: number): boolean {
  for (const check of checks) {
    const verdict = check(host, pid);
    if (verdict !== undefined) return verdict;
  }
  return true;
}
