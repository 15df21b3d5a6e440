import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { addOtherHostLiveness } from "@openprogram/session-context/store";
import type pg from "pg";
import { DatabaseUnavailableError } from "../errors.js";
import type { EventLogger } from "../logging.js";
import type { DeltaFrame, QuestionFrame, ServerFrame } from "../protocol.js";
import type { ReadinessCheck } from "../readiness.js";
import { ClusterBus, type BusMessage } from "./bus.js";
import { CommandForwarding, type ForwardedCommand } from "./forwarding.js";
import { PostgresBudgetLedger } from "./budget-ledger.js";
import { PostgresCapacity } from "./capacity.js";
import { SessionLeases } from "./leases.js";
import { migrate } from "./migrations.js";
import { RemoteTurnMirror } from "./mirror.js";
import { normalizeClusterOptions, type ClusterOptions, type ClusterSettings } from "./options.js";
import { createPool, query, redactUrl } from "./pool.js";
import { ReplicaRegistry } from "./replicas.js";
import { ChannelResync, type ResyncSide } from "./resync.js";
import type { RejectReason } from "./signing.js";

/** A flood of forged messages must not flood the log: one entry per reason and minute, with the count. */
const REJECTION_LOG_INTERVAL_MS = 60_000;

function rejectionReporter(log: EventLogger, where: string): (reason: RejectReason) => void {
  const pending = new Map<RejectReason, { count: number; loggedAt: number }>();
  return (reason) => {
    const now = Date.now();
    const entry = pending.get(reason) ?? { count: 0, loggedAt: 0 };
    entry.count++;
    pending.set(reason, entry);
    if (now - entry.loggedAt < REJECTION_LOG_INTERVAL_MS) return;
    log.warn("cluster_message_rejected", {
      database: where,
      reason,
      count: entry.count,
      hint: "a channel message was not signed with the cluster secret, or was replayed: another role can reach the database (see SECURITY.md, Cluster), or a replica has another secret",
    });
    entry.count = 0;
    entry.loggedAt = now;
  };
}

/** What the cluster needs from its dispatcher. */
export interface LocalSide extends ResyncSide {
  /** Sends a frame of a session whose turn runs elsewhere to this replica's subscribers of it. */
  deliver(sessionId: string, frame: ServerFrame): void;
  /** Carries out a command another replica forwarded (throws its error, e.g. invalid_answer). */
  execute(command: ForwardedCommand): void | Promise<void>;
}

/**
 * A dispatcher's membership of a cluster: the pool, the schema, the session
 * leases, the replica registry and the event channel. PostgreSQL only
 * coordinates; every session's record stays in its git repository on the
 * shared sessions root, written by the core.
 */
export class Cluster {
  readonly leases: SessionLeases;
  /** Session and program budgets, shared by the replicas. */
  readonly budgetLedger: PostgresBudgetLedger;
  /** Provider capacity (`limits`), shared by the replicas. */
  readonly capacity: PostgresCapacity;
  readonly mirror = new RemoteTurnMirror();
  readonly registry: ReplicaRegistry;
  private readonly forwarding: CommandForwarding;
  private readonly resync: ChannelResync;
  private local: LocalSide | null = null;
  private removeLiveness: (() => void) | null = null;
  readonly where: string;

  private constructor(
    readonly settings: ClusterSettings,
    readonly replicaId: string,
    private readonly pool: pg.Pool,
    private readonly bus: ClusterBus,
    private readonly log: EventLogger,
  ) {
    this.where = redactUrl(settings.postgresUrl);
    this.leases = new SessionLeases(pool, settings.postgresUrl, replicaId, settings.leaseTtlMs);
    this.budgetLedger = new PostgresBudgetLedger(pool, settings.postgresUrl, replicaId, settings.leaseTtlMs);
    this.capacity = new PostgresCapacity(pool, settings.postgresUrl, replicaId, settings.leaseTtlMs);
    this.registry = new ReplicaRegistry(pool, settings.postgresUrl, replicaId, settings.leaseTtlMs, (gone) => {
      for (const replica of gone)
        log.warn("replica_gone", {
          replica: replica.id,
          host: replica.host,
          pid: replica.pid,
          silent_ms: replica.silent_ms,
          hint: "its heartbeat stopped (killed, crashed or cut off); its expired leases were freed and its turns can be resumed here",
        });
    });
    this.forwarding = new CommandForwarding(bus, settings.forwardTimeoutMs, this.where);
    this.resync = new ChannelResync(
      bus,
      this.mirror,
      log,
      (sessionId) => this.runningElsewhere(sessionId),
      settings.forwardTimeoutMs,
    );
  }

  /** Connects, migrates the schema (safely while other replicas start) and opens the event channel. */
  static async connect(options: ClusterOptions, log: EventLogger): Promise<Cluster> {
    const settings = normalizeClusterOptions(options);
    const where = redactUrl(settings.postgresUrl);
    const replicaId = settings.replicaId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
    const pool = createPool(settings.postgresUrl, settings.poolSize, (error) =>
      log.warn("cluster_connection_error", { database: where, message: error.message }),
    );
    let cluster: Cluster | null = null;
    let wasUp = false;
    const rejections = rejectionReporter(log, where);
    const bus = new ClusterBus(
      settings.postgresUrl,
      replicaId,
      settings.secrets,
      (message) => cluster?.receive(message),
      (down) => {
        if (down !== null) {
          log.warn("cluster_channel_down", { database: where, reason: down });
          return;
        }
        log.info("cluster_channel_up", { database: where });
        // Back after an outage: frames may have been missed both ways.
        if (wasUp) cluster?.channelBack();
        wasUp = true;
      },
      (message) => cluster?.resync.dropped(message),
      rejections,
    );
    try {
      const client = await pool.connect().catch((error: unknown) => {
        throw new DatabaseUnavailableError(where, error);
      });
      try {
        const { from, to } = await migrate(client);
        if (from !== to) log.info("cluster_schema_migrated", { database: where, from, to });
      } finally {
        client.release();
      }
      await bus.open().catch((error: unknown) => {
        throw new DatabaseUnavailableError(where, error);
      });
    } catch (error) {
      await bus.close();
      await pool.end().catch(() => undefined);
      throw error;
    }
    cluster = new Cluster(settings, replicaId, pool, bus, log);
    return cluster;
  }

  /** Registers the replica (with its URL), starts heartbeats and lease renewal, and receives others' frames. */
  async join(serverUrl: string, local: LocalSide): Promise<void> {
    this.local = local;
    await this.registry.join(serverUrl);
    this.removeLiveness = addOtherHostLiveness(this.registry.liveness);
    this.leases.start();
    this.budgetLedger.start();
    this.capacity.start();
    this.log.info("cluster_joined", {
      replica: this.replicaId,
      database: this.where,
      replicas: this.registry.known.filter((row) => row.alive).length,
      lease_ttl_ms: this.settings.leaseTtlMs,
    });
  }

  /** Channel messages dropped as unsigned, forged or replayed, by reason. */
  get rejected(): Readonly<Record<RejectReason, number>> {
    return this.bus.rejected;
  }

  /** Sends a frame of a session whose turn runs here to the other replicas' subscribers. */
  relay(sessionId: string, frame: ServerFrame): void {
    this.bus.send({ k: "f", s: sessionId, f: frame });
  }

  /** The replica running the session's turn, when it is another one; null when none (or this one). */
  async runningElsewhere(sessionId: string): Promise<string | null> {
    const owner = await this.leases.ownerOf(sessionId);
    return owner !== null && owner !== this.replicaId ? owner : null;
  }

  /** Sends `answer`, `decline` or `stop` to the replica running the turn. */
  forward(replica: string, command: ForwardedCommand): Promise<void> {
    return this.forwarding.forward(replica, command);
  }

  /** The readiness check: the database answers and the event channel is up. */
  async check(): Promise<ReadinessCheck> {
    if (this.bus.down !== null)
      return { ok: false, detail: `The cluster database is unreachable: ${this.bus.down} (${this.where}).` };
    try {
      await query(this.pool, this.settings.postgresUrl, "SELECT 1");
    } catch (error) {
      return { ok: false, detail: (error as Error).message };
    }
    const alive = this.registry.known.filter((row) => row.alive).length;
    return { ok: true, detail: `replica ${this.replicaId} of ${alive} live (${this.where})` };
  }

  /** Leaves the cluster: after the turns have drained, so their leases are released first. */
  async close(): Promise<void> {
    this.leases.stop();
    this.budgetLedger.stop();
    this.capacity.stop();
    this.removeLiveness?.();
    await this.registry.leave();
    await this.bus.close();
    await this.pool.end().catch(() => undefined);
  }

  private channelBack(): void {
    if (this.local !== null) void this.resync.channelBack(this.local);
  }

  private receive(message: BusMessage): void {
    const local = this.local;
    if (local === null) return;
    if (message.k === "f" && typeof message.s === "string") {
      const frame = message.f as ServerFrame;
      // Re-syncing: the owner's catch-up carries the text so far, these deltas included.
      if (frame.type === "delta" && this.resync.isHeld(message.s)) return;
      this.mirror.observe(message.s, frame);
      local.deliver(message.s, frame);
      return;
    }
    if (message.k === "missed" && Array.isArray(message.s)) {
      void this.resync.missedBy(local, message.r, message.s as string[]);
      return;
    }
    if (message.to !== this.replicaId) return;
    if (message.k === "sync" && typeof message.s === "string") {
      this.resync.answerSync(local, message.r, message.s);
      return;
    }
    if (message.k === "state" && typeof message.s === "string") {
      // A replica of an earlier version sends no `live`: its answer is taken as a running turn's, as before.
      this.resync.receiveState(
        local,
        message.s,
        message.q as QuestionFrame[],
        message.d as DeltaFrame[],
        message.live !== false,
      );
      return;
    }
    if (typeof message.id !== "string") return;
    if (message.k === "cmd")
      void this.forwarding.handleCommand(message.r, message.id, message.c as ForwardedCommand, (command) =>
        local.execute(command),
      );
    else if (message.k === "re")
      this.forwarding.handleReply(
        message.id,
        message.error as { code: string; name: string; message: string } | undefined,
      );
  }
}
