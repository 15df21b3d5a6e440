import type pg from "pg";

/**
 * Rows a replica keeps alive in PostgreSQL by renewing them every third of
 * their lease time (session leases, budget holds, capacity slots): a replica
 * that dies stops renewing, and its rows expire for the others to take. The
 * timer is unref'd: it never keeps a process alive by itself.
 */
export abstract class LeasedRows {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    protected readonly pool: pg.Pool,
    protected readonly url: string,
    protected readonly owner: string,
    protected readonly ttlMs: number,
  ) {}

  /** Starts renewing (a second start without a stop changes nothing). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.renew(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing: the rows expire within the lease time unless released. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Extends this replica's rows; never throws (a renewal that fails lets them expire, as a dead replica's). */
  abstract renew(): Promise<void>;
}
