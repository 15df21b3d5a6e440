import { hostname } from "node:os";
import type pg from "pg";
import { query } from "./pool.js";

/** A replica as the registry knows it. */
export interface ReplicaRow {
  id: string;
  host: string;
  pid: number;
  url: string;
  alive: boolean;
}

/**
 * The registry of replicas: each writes its row at start, refreshes its
 * heartbeat every third of the lease TTL and removes the row on shutdown.
 * A replica whose heartbeat is older than the TTL is dead; the snapshot of
 * the last refresh answers the core's question "is this process on another
 * host alive?" (addOtherHostLiveness), synchronously.
 */
export class ReplicaRegistry {
  private snapshot: ReplicaRow[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** The last heartbeat's failure, or null when it succeeded. */
  lastError: Error | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
    readonly id: string,
    private readonly ttlMs: number,
  ) {}

  /** Registers this replica and starts its heartbeat. */
  async join(serverUrl: string): Promise<void> {
    await query(
      this.pool,
      this.url,
      `INSERT INTO openprogram_replicas (id, host, pid, url) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, url = EXCLUDED.url, heartbeat_at = now()`,
      [this.id, hostname(), process.pid, serverUrl],
    );
    await this.refresh();
    this.timer = setInterval(() => void this.beat(), Math.max(100, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** Removes this replica's row (a clean shutdown). */
  async leave(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    try {
      await query(this.pool, this.url, "DELETE FROM openprogram_replicas WHERE id = $1", [this.id]);
    } catch {
      // its heartbeat goes stale instead
    }
  }

  /** The replicas as of the last heartbeat. */
  get known(): readonly ReplicaRow[] {
    return this.snapshot;
  }

  /** For the core: alive or dead when a replica row names the process, undefined otherwise. */
  readonly liveness = (host: string, pid: number): boolean | undefined =>
    this.snapshot.find((row) => row.host === host && row.pid === pid)?.alive;

  private async beat(): Promise<void> {
    try {
      await query(this.pool, this.url, "UPDATE openprogram_replicas SET heartbeat_at = now() WHERE id = $1", [this.id]);
      await this.refresh();
      // Large event payloads are read within moments of their notification; an hour is plenty.
      await query(
        this.pool,
        this.url,
        "DELETE FROM openprogram_event_payloads WHERE created_at < now() - interval '1 hour'",
      );
      this.lastError = null;
    } catch (error) {
      this.lastError = error as Error;
    }
  }

  private async refresh(): Promise<void> {
    const rows = await query<ReplicaRow>(
      this.pool,
      this.url,
      `SELECT id, host, pid, url, heartbeat_at > now() - $1 * interval '1 millisecond' AS alive FROM openprogram_replicas`,
      [this.ttlMs],
    );
    this.snapshot = rows.rows;
  }
}
