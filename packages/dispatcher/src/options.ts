import type { McpServerConfig } from "@openprogram/mcp";
import type { Budgets } from "@openprogram/session-context";
import type { LimitsConfig } from "@openprogram/session-context/budgets";
import { InvalidInputError, type AgenticFunction, type Runtime, type SessionDB } from "@openprogram/session-context";
import type { ProgramEntry } from "@openprogram/session-context/host";
import type { ClusterOptions } from "./cluster/options.js";
import { normalizeLimits, type ServerLimits } from "./limits.js";
import type { LogSink } from "./logging.js";
import { isLoopbackHost } from "./loopback.js";

/**
 * A program the web may run: an agentic function (called in the dispatcher's
 * process), or the core's `ProgramEntry` with its own `run` (the research
 * program; one the process runner's `isolatedProgram` runs in a child
 * process). Either runs inside the turn's session context.
 */
export type ServedProgram = AgenticFunction<never, unknown> | ProgramEntry;

/** Options of `createDispatcher`. */
export interface DispatcherOptions {
  /** Address to bind; default "127.0.0.1". Anything but loopback requires `token`. */
  host?: string;
  /** Port; default 8787; 0 picks a free one. */
  port?: number;
  /** The store; default `openStore({ root: sessionsRoot })`. */
  db?: SessionDB;
  /** The runtime every turn uses; null runs without a model; absent: created from configuration by sessionContext. */
  runtime?: Runtime | null;
  /** Sessions root; default `$OPENPROGRAM_HOME/sessions`. Ignored when `db` is given (they must agree). */
  sessionsRoot?: string;
  /** The programs a `run` frame may name; the network can never name a module. */
  programs?: Record<string, ServedProgram>;
  /**
   * For a registered program name, the ref its turns record (default
   * `program:<name>`), by which a `resume` (or an answer after a restart)
   * finds the program again. `openprogram serve` gives a `--program
   * module#export` its `module:<path>#<export>` ref, the CLI's, so that
   * `openprogram resume`/`answer` continue its web turns and the web the
   * turns `openprogram run` started from that module.
   */
  programRefs?: Record<string, string>;
  /** Required on the WebSocket upgrade (`?token=` or `Authorization: Bearer`) when set. */
  token?: string;
  /** Origins allowed besides the served host ("*" allows any). */
  allowedOrigins?: string[];
  /** How long shutdown() lets running turns finish before cancelling them; default 10000. */
  shutdownGraceMs?: number;
  /** Server-wide caps and timeouts; each one left out keeps its default (`DEFAULT_LIMITS`). */
  limits?: Partial<ServerLimits>;
  /** Receives one entry per event (start, connections, turns, errors, shutdown). */
  log?: LogSink;
  /**
   * Record error messages and stack traces in spans and log entries. Off by default: they carry the error's
   * code and type only, since a message may quote a prompt. Sets the core's process-wide policy
   * (`setTraceErrorMessages`); absent, `OPENPROGRAM_ERROR_MESSAGES=1` turns it on.
   */
  errorMessages?: boolean;
  /**
   * Run as one replica of a cluster coordinated through PostgreSQL (`openprogram serve --postgres`): every
   * replica shares the sessions root and the database. Absent: a single server, no database.
   */
  cluster?: ClusterOptions;
  /**
   * Budgets of every turn (`openprogram serve --max-turn-tokens ...`, `"budgets"` in openprogram.config.json). In a
   * cluster the session and program budgets are kept in PostgreSQL, shared by the replicas.
   */
  budgets?: Budgets;
  /** Provider capacity shared by every turn of this server (`"limits"` in openprogram.config.json). */
  providerLimits?: LimitsConfig;
  /**
   * MCP servers the page may enable for a chat turn (`mcp_servers` of a `chat` frame), by name, in the shape of
   * `mcpServers` in openprogram.config.json (`openprogram serve --mcp <name>` passes the configured entries).
   * Each is started on first use and stopped when the dispatcher closes; its tools ask for approval unless allowed.
   */
  mcpServers?: Record<string, McpServerConfig>;
}

/** A running dispatcher. */
export interface Dispatcher {
  /** `http://host:port`: the web page. */
  readonly url: string;
  /** `ws://host:port/ws`: the protocol endpoint. */
  readonly wsUrl: string;
  readonly port: number;
  readonly host: string;
  /**
   * Graceful: stops accepting turns, lets running ones finish for the grace
   * period, then cancels them (recorded cancelled and committed by the core),
   * closes sockets with 1001 and stops listening. Idempotent.
   */
  shutdown(reason?: string): Promise<void>;
  /** shutdown() without a grace period: running turns are cancelled at once. */
  close(): Promise<void>;
}

/** Defaults of the dispatcher. */
export const DEFAULTS = { host: "127.0.0.1", port: 8787, shutdownGraceMs: 10_000 } as const;

/** DispatcherOptions with defaults applied and every value checked. */
export interface NormalizedOptions {
  host: string;
  port: number;
  token: string | undefined;
  allowedOrigins: string[];
  shutdownGraceMs: number;
  limits: ServerLimits;
}

/** Applies defaults and refuses unusable values with an InvalidInputError naming the option. */
export function normalizeOptions(options: DispatcherOptions): NormalizedOptions {
  const host = options.host ?? DEFAULTS.host;
  if (typeof host !== "string" || host.trim() === "" || /\s/.test(host))
    throw new InvalidInputError(`host ${JSON.stringify(host)} must be an address or host name.`);
  const port = options.port ?? DEFAULTS.port;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new InvalidInputError(`port ${String(port)} must be an integer from 0 to 65535 (0 picks a free port).`);
  const token = options.token;
  if (token !== undefined) assertUsableToken(token, "token");
  if (!isLoopbackHost(host) && token === undefined) {
    throw new InvalidInputError(
      `Binding ${host} exposes the dispatcher beyond this machine, so it requires a token: pass --token or set OPENPROGRAM_TOKEN (or bind 127.0.0.1).`,
    );
  }
  const allowedOrigins = (options.allowedOrigins ?? []).map((origin) => normalizeOrigin(origin, "allowedOrigins"));
  const shutdownGraceMs = options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs;
  if (!Number.isFinite(shutdownGraceMs) || shutdownGraceMs < 0) {
    throw new InvalidInputError(
      `shutdownGraceMs ${String(shutdownGraceMs)} must be a non-negative number of milliseconds.`,
    );
  }
  return { host, port, token, allowedOrigins, shutdownGraceMs, limits: normalizeLimits(options.limits) };
}

/** Throws unless the token can travel in a header and a query string. */
export function assertUsableToken(token: unknown, name: string): asserts token is string {
  if (typeof token !== "string" || token === "") throw new InvalidInputError(`${name} must be a non-empty string.`);
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new InvalidInputError(`${name} must be printable ASCII without spaces (it travels in a header and a URL).`);
}

/** "*" or the origin of a URL ("https://example.com"); anything else throws naming `name`. */
export function normalizeOrigin(origin: string, name: string): string {
  if (origin === "*") return origin;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    throw new InvalidInputError(
      `${name}: ${JSON.stringify(origin)} is not an origin; write it like https://example.com (scheme, host, optional port) or "*".`,
    );
  }
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || parsed.origin === "null") {
    throw new InvalidInputError(
      `${name}: ${JSON.stringify(origin)} must be an http or https origin, like https://example.com.`,
    );
  }
  return parsed.origin;
}
