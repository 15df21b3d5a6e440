import { createServer, type IncomingMessage } from "node:http";
import { resolve } from "node:path";
import type { Duplex } from "node:stream";
import { InvalidInputError, type SessionDB } from "@openprogram/session-context";
import { ProviderLimits } from "@openprogram/session-context/budgets";
import { openStore } from "@openprogram/session-context/store";
import { setTraceErrorMessages } from "@openprogram/session-context/telemetry";
import { resolvePriceTable } from "@openprogram/session-context/usage";
import { WebSocketServer, type WebSocket } from "ws";
import { Client, CLOSE_TOO_SLOW } from "./client.js";
import { gateConnections } from "./connection-gate.js";
import { DeltaRelay } from "./delta-relay.js";
import { FrameHandler } from "./frame-handler.js";
import { HeavyRequests } from "./heavy-requests.js";
import { createRequestHandler } from "./http.js";
import { createEventLogger } from "./logging.js";
import { createMcpEndpoint } from "./mcp-endpoint.js";
import { isLoopbackHost, urlHost } from "./loopback.js";
import { normalizeOptions, type Dispatcher, type DispatcherOptions } from "./options.js";
import { ProgramRegistry } from "./programs.js";
import { MAX_FRAME_BYTES, PROTOCOL_VERSION } from "./protocol.js";
import { checkReadiness } from "./readiness.js";
import { closeSockets, listen } from "./server-lifecycle.js";
import { logStart } from "./start-banner.js";
import { loadWebAssets } from "./static-files.js";
import { Subscriptions } from "./subscriptions.js";
import { Turns } from "./turns.js";
import { DispatcherMetrics } from "./metrics.js";
import { checkUpgrade, mayReadDetails, rejectUpgrade, tokenRefusal } from "./upgrade-checks.js";
import { DISPATCHER_VERSION } from "./version.js";
import { WebAsker } from "./web-asker.js";
import { Cluster } from "./cluster/cluster.js";
import { NoRunningTurnError } from "./errors.js";
import { resyncSubscribers } from "./resync-subscribers.js";
import { McpServerChoices } from "./mcp-servers.js";

/** Unanswered pings for this long mean the peer is gone (proxies drop idle sockets after ~60 s). */
const HEARTBEAT_MS = 30_000;
/** WebSocket close code for a connection closed for being idle (a normal closure: the page reconnects). */
const IDLE_CLOSE_CODE = 1000;

/**
 * Starts the dispatcher: one HTTP server that serves the web page, `/healthz`
 * and `/readyz`, and upgrades `/ws` to the WebSocket protocol documented in
 * the README. Every turn runs inside the core's sessionContext.
 */
export async function createDispatcher(options: DispatcherOptions = {}): Promise<Dispatcher> {
  const settings = normalizeOptions(options);
  if (options.errorMessages !== undefined) setTraceErrorMessages(options.errorMessages);
  const db = storeFor(options);
  const programs = new ProgramRegistry(options.programs, options.programRefs);
  const assets = loadWebAssets();
  const log = createEventLogger(options.log, settings.token ? [settings.token] : []);
  const startedAt = performance.now();

  // In a cluster the schema is migrated and the event channel open before anything is served.
  const cluster = options.cluster ? await Cluster.connect(options.cluster, log) : null;
  const subscriptions = new Subscriptions();
  if (cluster) subscriptions.relay = (sessionId, frame) => cluster.relay(sessionId, frame);
  const asker = new WebAsker((sessionId, frame) => subscriptions.publish(sessionId, frame));
  const deltas = new DeltaRelay((sessionId, frame) => subscriptions.publish(sessionId, frame));
  const { limits } = settings;
  // Spending in dollars is priced as the budgets price it: their table, else the configured one.
  const metrics = new DispatcherMetrics(() => {
    try {
      return options.budgets?.prices ?? resolvePriceTable();
    } catch {
      return null; // a broken price table is reported where a cost budget needs it, not by the metrics
    }
  });
  if (cluster) metrics.watchClusterRejections(() => cluster.rejected);
  // In a cluster, session and program spending is kept in PostgreSQL, where every replica reserves it.
  const budgets = options.budgets ? { ...options.budgets, ...(cluster ? { ledger: cluster.budgetLedger } : {}) } : null;
  const mcp = new McpServerChoices(options.mcpServers);
  const turns = new Turns({
    metrics,
    db,
    runtime: options.runtime,
    asker,
    subscriptions,
    deltas,
    programs,
    log,
    maxConcurrentTurns: limits.maxConcurrentTurns,
    cluster,
    budgets,
    // In a cluster, provider capacity too: each replica queues its own callers, PostgreSQL grants the room.
    limits: options.providerLimits
      ? cluster
        ? new ProviderLimits(options.providerLimits, { store: cluster.capacity })
        : options.providerLimits
      : null,
    mcp,
  });
  const heavy = new HeavyRequests();
  const frames = new FrameHandler({
    db,
    turns,
    asker,
    subscriptions,
    deltas,
    programs,
    log,
    cluster,
    heavy,
    budgets,
    mcp,
  });
  let shuttingDown: string | null = null;
  const policy = {
    token: settings.token,
    allowedOrigins: settings.allowedOrigins,
    loopbackBound: isLoopbackHost(settings.host),
  };

  // Only a shown token lifts a connection's short header deadline (with no token set, none ever does).
  const presentsToken = (request: IncomingMessage): boolean =>
    policy.token !== undefined && tokenRefusal(request, policy) === null;
  const handleRequest = createRequestHandler({
    assets,
    version: DISPATCHER_VERSION,
    startedAt,
    log,
    readiness: () => checkReadiness({ db, runtime: options.runtime, shuttingDown, cluster }),
    mayReadDetails: (request) => mayReadDetails(request, policy),
    tokenRefusal: (request) => tokenRefusal(request, policy),
    metrics,
    mcp: createMcpEndpoint({ programs, db, runtime: options.runtime, policy }),
  });
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      // How often Node looks for requests past those timeouts.
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(limits.headersTimeoutMs / 4))),
    },
    (request, response) => {
      if (gate.isRefused(request.socket)) request.socket.destroy();
      else if (gate.admit(request, response, presentsToken(request))) handleRequest(request, response);
    },
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  const gate = gateConnections(server, limits, log);
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
  let nextClient = 1;

  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    if (gate.isRefused(request.socket)) {
      socket.destroy();
      return;
    }
    if (!gate.admit(request, null, presentsToken(request))) return;
    const remote = request.socket.remoteAddress ?? "";
    if (shuttingDown !== null) {
      rejectUpgrade(socket, 503, `The dispatcher is shutting down (${shuttingDown}).`);
      return;
    }
    const verdict = checkUpgrade(request, policy);
    if (!verdict.ok) {
      log.warn("connection_rejected", { remote, status: verdict.status, origin: request.headers.origin });
      rejectUpgrade(socket, verdict.status, verdict.reason);
      return;
    }
    wss.handleUpgrade(request, socket, head, (socketOfClient) => accept(socketOfClient, request, socket));
  });

  const clients = new Map<WebSocket, Client>();

  function accept(socket: WebSocket, request: IncomingMessage, connection: Duplex): void {
    const client = new Client(
      `c${nextClient++}`,
      socket,
      (slow) =>
        log.warn("client_too_slow", {
          client: slow.id,
          hint: `the client left more than ${limits.maxUnsentBytes} bytes of frames unread; it was closed with ${CLOSE_TOO_SLOW}, its turns go on`,
        }),
      limits.maxUnsentBytes,
      connection,
    );
    const traceparent = request.headers.traceparent;
    if (typeof traceparent === "string") client.traceparent = traceparent;
    clients.set(socket, client);
    metrics.connectionOpened();
    log.info("connection_open", {
      client: client.id,
      remote: request.socket.remoteAddress,
      origin: request.headers.origin,
    });
    socket.on("pong", () => (client.alive = true));
    socket.on("message", (data, isBinary) => {
      client.lastActivity = performance.now();
      void frames.receive(client, data, isBinary);
    });
    socket.on("error", (error: Error & { code?: string }) => {
      // ws closes the socket itself (1009 for frames over maxPayload, 1002 for protocol errors).
      log.warn("connection_error", {
        client: client.id,
        error_code: error.code ?? "socket_error",
        message: error.message,
      });
    });
    socket.on("close", (code) => {
      clients.delete(socket);
      metrics.connectionClosed();
      subscriptions.dropClient(client);
      log.info("connection_close", { client: client.id, code });
    });
    client.send({
      type: "hello",
      protocol_version: PROTOCOL_VERSION,
      server: "openprogram-dispatcher",
      version: DISPATCHER_VERSION,
    });
  }

  let address: Awaited<ReturnType<typeof listen>>;
  try {
    address = await listen(server, settings);
  } catch (error) {
    await cluster?.close();
    throw error;
  }
  const host = settings.host;
  const url = `http://${urlHost(host)}:${address.port}`;
  await cluster?.join(url, {
    deliver: (sessionId, frame) => subscriptions.deliver(sessionId, frame),
    watched: () => subscriptions.sessionIds().filter((sessionId) => !turns.isBusy(sessionId)),
    resync: (sessionId, reason, runningElsewhere) =>
      resyncSubscribers(db, subscriptions, sessionId, reason, runningElsewhere, budgets),
    liveState: (sessionId) =>
      turns.isBusy(sessionId) ? { questions: asker.pendingFor(sessionId), deltas: deltas.catchUp(sessionId) } : null,
    // What another replica's client sent for a turn running here, as if sent here.
    execute: (command) => {
      if (command.type === "answer") asker.answer(command.question_id, command.value, command.session_id);
      else if (command.type === "decline") asker.decline(command.question_id, command.reason, command.session_id);
      else if (!turns.stop(command.session_id, "stopped by a client on another replica"))
        throw new NoRunningTurnError(command.session_id);
    },
  });
  logStart(log, settings, address.port, url, db, programs, options);

  const heartbeat = setInterval(() => {
    for (const [socket, client] of clients) {
      if (!client.alive) {
        socket.terminate();
        continue;
      }
      client.alive = false;
      socket.ping();
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();

  // Silent connections give their slot back (a page reconnects by itself when it is used again).
  const idleSweep =
    limits.wsIdleTimeoutMs > 0
      ? setInterval(
          () => {
            const now = performance.now();
            for (const [socket, client] of clients) {
              if (!client.isIdle(limits.wsIdleTimeoutMs, now)) continue;
              log.info("connection_idle", { client: client.id, idle_timeout_ms: limits.wsIdleTimeoutMs });
              socket.close(IDLE_CLOSE_CODE, `closed after ${limits.wsIdleTimeoutMs} ms without frames`);
            }
          },
          Math.min(HEARTBEAT_MS, Math.max(25, Math.floor(limits.wsIdleTimeoutMs / 4))),
        )
      : null;
  idleSweep?.unref();

  let shutdownPromise: Promise<void> | null = null;
  const shutdown = (reason = "shutdown requested", graceMs = settings.shutdownGraceMs): Promise<void> => {
    shutdownPromise ??= (async () => {
      const began = performance.now();
      shuttingDown = reason;
      log.info("shutdown_start", { reason, running_turns: turns.count, grace_ms: graceMs });
      const serverClosed = new Promise<void>((closed) => server.close(() => closed()));
      const { cancelled, abandoned } = await turns.drain(reason, graceMs);
      clearInterval(heartbeat);
      if (idleSweep) clearInterval(idleSweep);
      await closeSockets([...clients.keys()], `server shutting down: ${reason}`);
      wss.close();
      server.closeAllConnections();
      await serverClosed;
      // After the turns: their leases are released, then the replica leaves the registry.
      await cluster?.close();
      // The MCP servers the turns started (none unless the dispatcher offers some).
      await mcp.close();
      log.info("shutdown_complete", {
        reason,
        cancelled_turns: cancelled,
        abandoned_turns: abandoned,
        duration_ms: Math.round(performance.now() - began),
      });
    })();
    return shutdownPromise;
  };

  return {
    url,
    wsUrl: `ws://${urlHost(host)}:${address.port}/ws`,
    port: address.port,
    host,
    shutdown: (reason) => shutdown(reason),
    close: () => shutdown("closed", 0),
  };
}

/** The store: `db`, else the one at `sessionsRoot` (or the default root). */
function storeFor(options: DispatcherOptions): SessionDB {
  if (options.db) {
    if (options.sessionsRoot !== undefined && resolve(options.sessionsRoot) !== options.db.root) {
      throw new InvalidInputError(
        `sessionsRoot ${options.sessionsRoot} and db (rooted at ${options.db.root}) disagree; pass one of them.`,
      );
    }
    return options.db;
  }
  return options.sessionsRoot !== undefined ? openStore({ root: options.sessionsRoot }) : openStore();
}
