import pg from "pg";
import { connectionConfig } from "./pool.js";

/** The LISTEN/NOTIFY channel every replica of a database shares. */
export const CHANNEL = "openprogram_cluster";
/** NOTIFY payloads must stay under 8000 bytes; bigger messages go through a table and the notification names the row. */
export const MAX_INLINE_PAYLOAD = 7_500;
/** Reconnection backoff after the channel's connection breaks. */
const BACKOFF_MS = { first: 200, max: 5_000 };

/** A message on the channel: `r` is the sending replica; `to`, when set, the only one meant to act on it. */
export interface BusMessage {
  r: string;
  to?: string;
  [field: string]: unknown;
}

/**
 * The cluster's message channel: one dedicated connection that LISTENs and
 * sends NOTIFYs. Messages from one replica arrive everywhere in the order it
 * sent them (one connection, one statement each, delivered in commit order),
 * and are handled in that order here, also when a big one must first be read
 * from `openprogram_event_payloads`. A broken connection is reopened with
 * backoff; messages sent or published meanwhile are lost, so the owner is told
 * of each one it could not send (`onDropped`) and of each reconnection
 * (`onState(null)` again), and resynchronises (cluster.ts).
 */
export class ClusterBus {
  private client: pg.Client | null = null;
  private closed = false;
  private backoff = BACKOFF_MS.first;
  private inbox: Promise<void> = Promise.resolve();
  private outbox: Promise<void> = Promise.resolve();
  private queued = 0;
  /** Why the channel is down, or null while it is up. */
  down: string | null = "not connected yet";
  /** Messages that could not be sent while the channel was down. */
  dropped = 0;

  constructor(
    private readonly url: string,
    private readonly replicaId: string,
    private readonly onMessage: (message: BusMessage) => void,
    private readonly onState: (down: string | null) => void = () => {},
    /** A message that could not be sent (the channel was down, or its statement failed). */
    private readonly onDropped: (message: Omit<BusMessage, "r">) => void = () => {},
  ) {}

  /** Opens the channel (throws when the database cannot be reached at all). */
  async open(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** Sends a message to every replica (itself included: it ignores its own). */
  send(message: Omit<BusMessage, "r">): void {
    const client = this.client;
    if (client === null || this.down !== null) {
      this.dropped++;
      this.onDropped(message);
      return;
    }
    const text = JSON.stringify({ ...message, r: this.replicaId });
    const sent =
      Buffer.byteLength(text) <= MAX_INLINE_PAYLOAD
        ? this.serial(client, "SELECT pg_notify($1, $2)", [CHANNEL, text])
        : // One statement, so the reference goes out in order with the small messages around it.
          this.serial(
            client,
            `WITH stored AS (INSERT INTO openprogram_event_payloads (body) VALUES ($2) RETURNING id)
             SELECT pg_notify($1, json_build_object('r', $3::text, 'ref', stored.id::text)::text) FROM stored`,
            [CHANNEL, text, this.replicaId],
          );
    sent.catch(() => {
      this.dropped++;
      this.onDropped(message);
    });
  }

  /** One statement at a time on the channel's connection, in the order asked. */
  private serial<R extends pg.QueryResultRow>(
    client: pg.Client,
    text: string,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    const result = this.outbox.then(() => client.query<R>(text, values));
    this.outbox = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private async connect(): Promise<void> {
    // Named after its replica, so an operator (or a test) can tell the replicas' channels apart in pg_stat_activity.
    const client = new pg.Client({
      ...connectionConfig(this.url),
      application_name: channelApplicationName(this.replicaId),
    });
    client.on("error", (error) => this.lost(client, error.message));
    client.on("end", () => this.lost(client, "the connection ended"));
    client.on("notification", (note) => {
      if (note.channel === CHANNEL && note.payload !== undefined) this.receive(client, note.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.outbox = Promise.resolve();
    this.backoff = BACKOFF_MS.first;
    this.setDown(null);
  }

  private lost(client: pg.Client, why: string): void {
    if (this.client !== client) return;
    this.client = null;
    client.end().catch(() => undefined);
    if (this.closed) return;
    this.setDown(`the cluster's event channel lost its database connection (${why}); reconnecting`);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    const delay = this.backoff;
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MS.max);
    setTimeout(() => {
      if (this.closed) return;
      this.connect().catch((error: Error) => {
        this.setDown(`the cluster's event channel cannot reach the database (${error.message}); reconnecting`);
        this.reconnectLater();
      });
    }, delay).unref();
  }

  private setDown(down: string | null): void {
    this.down = down;
    this.onState(down);
  }

  private receive(client: pg.Client, payload: string): void {
    let message: BusMessage & { ref?: string };
    try {
      message = JSON.parse(payload) as BusMessage & { ref?: string };
    } catch {
      return;
    }
    if (message.r === this.replicaId) return;
    if (typeof message.ref === "string") {
      const id = message.ref;
      this.enqueue(async () => {
        const found = await this.serial<{ body: string }>(
          client,
          "SELECT body FROM openprogram_event_payloads WHERE id = $1",
          [id],
        );
        const body = found.rows[0]?.body;
        if (body !== undefined) this.onMessage(JSON.parse(body) as BusMessage);
      });
      return;
    }
    // In order: behind any big message still being read.
    if (this.queued === 0) this.onMessage(message);
    else this.enqueue(() => this.onMessage(message));
  }

  private enqueue(handle: () => Promise<void> | void): void {
    this.queued++;
    this.inbox = this.inbox
      .then(handle)
      .catch(() => undefined)
      .finally(() => void this.queued--);
  }
}

/** The application_name of a replica's channel connection (PostgreSQL keeps 63 bytes of it). */
export function channelApplicationName(replicaId: string): string {
  return `openprogram-channel:${replicaId}`.slice(0, 63);
}
