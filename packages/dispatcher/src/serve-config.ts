import { resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { defaultSessionsRoot, openProgramHome } from "@openprogram/session-context/store";
import type { ClusterOptions } from "./cluster/options.js";
import { checkLimit, LIMIT_NAMES, type ServerLimits } from "./limits.js";
import { isLoopbackHost } from "./loopback.js";
import { assertUsableToken, DEFAULTS, normalizeOrigin, type DispatcherOptions } from "./options.js";
import { loadOrCreateServeToken, readTokenFile } from "./serve-token.js";

/** The command-line flags of `openprogram serve` that configure the dispatcher (as parsed, strings allowed). */
export interface ServeFlags {
  host?: string;
  port?: string | number;
  token?: string;
  /** Read the token from this file (it never appears in `ps`). */
  tokenFile?: string;
  /** Run without a token (loopback only): every local user can then connect. */
  noToken?: boolean;
  /** Comma-separated, or a list. */
  allowedOrigins?: string | string[];
  sessionsRoot?: string;
  graceMs?: string | number;
  maxTurns?: string | number;
  maxConnections?: string | number;
  maxConnectionsPerAddress?: string | number;
  headersTimeoutMs?: string | number;
  unauthenticatedHeadersTimeoutMs?: string | number;
  loopbackHealthSlots?: string | number;
  requestTimeoutMs?: string | number;
  keepAliveTimeoutMs?: string | number;
  wsIdleTimeoutMs?: string | number;
  maxUnsentBytes?: string | number;
  /** Run as a cluster replica coordinated through this PostgreSQL database. */
  postgres?: string;
  leaseTtlMs?: string | number;
  pgPoolSize?: string | number;
  /** The cluster's shared secrets, one per line (the first signs); else OPENPROGRAM_CLUSTER_SECRET. */
  clusterSecretFile?: string;
}

/** Flag and environment variable of each setting, for messages and the README. */
export const SERVE_SETTINGS = {
  host: { flag: "--host", variable: "OPENPROGRAM_HOST" },
  port: { flag: "--port", variable: "OPENPROGRAM_PORT" },
  token: { flag: "--token", variable: "OPENPROGRAM_TOKEN" },
  tokenFile: { flag: "--token-file", variable: "OPENPROGRAM_TOKEN_FILE" },
  allowedOrigins: { flag: "--allowed-origin", variable: "OPENPROGRAM_ALLOWED_ORIGINS" },
  sessionsRoot: { flag: "--sessions-root", variable: "OPENPROGRAM_HOME" },
  graceMs: { flag: "--grace-ms", variable: "OPENPROGRAM_SHUTDOWN_GRACE_MS" },
  maxTurns: { flag: "--max-turns", variable: "OPENPROGRAM_MAX_TURNS" },
  maxConnections: { flag: "--max-connections", variable: "OPENPROGRAM_MAX_CONNECTIONS" },
  maxConnectionsPerAddress: {
    flag: "--max-connections-per-address",
    variable: "OPENPROGRAM_MAX_CONNECTIONS_PER_ADDRESS",
  },
  headersTimeoutMs: { flag: "--headers-timeout-ms", variable: "OPENPROGRAM_HEADERS_TIMEOUT_MS" },
  unauthenticatedHeadersTimeoutMs: {
    flag: "--unauthenticated-headers-timeout-ms",
    variable: "OPENPROGRAM_UNAUTHENTICATED_HEADERS_TIMEOUT_MS",
  },
  loopbackHealthSlots: { flag: "--loopback-health-slots", variable: "OPENPROGRAM_LOOPBACK_HEALTH_SLOTS" },
  requestTimeoutMs: { flag: "--request-timeout-ms", variable: "OPENPROGRAM_REQUEST_TIMEOUT_MS" },
  keepAliveTimeoutMs: { flag: "--keep-alive-timeout-ms", variable: "OPENPROGRAM_KEEP_ALIVE_TIMEOUT_MS" },
  wsIdleTimeoutMs: { flag: "--ws-idle-timeout-ms", variable: "OPENPROGRAM_WS_IDLE_TIMEOUT_MS" },
  maxUnsentBytes: { flag: "--max-unsent-bytes", variable: "OPENPROGRAM_MAX_UNSENT_BYTES" },
  postgres: { flag: "--postgres", variable: "OPENPROGRAM_POSTGRES_URL" },
  leaseTtlMs: { flag: "--lease-ttl-ms", variable: "OPENPROGRAM_LEASE_TTL_MS" },
  pgPoolSize: { flag: "--pg-pool-size", variable: "OPENPROGRAM_PG_POOL_SIZE" },
  clusterSecretFile: { flag: "--cluster-secret-file", variable: "OPENPROGRAM_CLUSTER_SECRET_FILE" },
} as const;

/** The cluster secrets themselves, space-separated, the first signing (a variable only: `ps` shows flags). */
export const CLUSTER_SECRET_VARIABLE = "OPENPROGRAM_CLUSTER_SECRET";

type Setting = keyof typeof SERVE_SETTINGS;

/** The serve setting of each server limit. */
const LIMIT_SETTINGS: { [K in keyof ServerLimits]: Setting } = {
  maxConcurrentTurns: "maxTurns",
  maxConnections: "maxConnections",
  maxConnectionsPerAddress: "maxConnectionsPerAddress",
  headersTimeoutMs: "headersTimeoutMs",
  unauthenticatedHeadersTimeoutMs: "unauthenticatedHeadersTimeoutMs",
  loopbackHealthSlots: "loopbackHealthSlots",
  requestTimeoutMs: "requestTimeoutMs",
  keepAliveTimeoutMs: "keepAliveTimeoutMs",
  wsIdleTimeoutMs: "wsIdleTimeoutMs",
  maxUnsentBytes: "maxUnsentBytes",
};

/** Where the token in force came from. */
export type TokenOrigin =
  | { kind: "none" }
  | { kind: "flag" | "environment"; name: string }
  | { kind: "file"; name: string; path: string }
  | { kind: "stored"; path: string };

/** What `resolveServeConfig` returns: the dispatcher's options, and where its token came from. */
export interface ServeConfig extends DispatcherOptions {
  tokenOrigin: TokenOrigin;
}

/**
 * The dispatcher's configuration from flags over the environment (the
 * variables in SERVE_SETTINGS; OPENPROGRAM_HOME for the sessions root).
 * Programs are not included. Every invalid value throws InvalidInputError
 * naming the flag or variable it came from.
 *
 * The token: `--no-token` runs without one (loopback only); else `--token`,
 * `--token-file`, OPENPROGRAM_TOKEN or OPENPROGRAM_TOKEN_FILE; else the token
 * stored in `$OPENPROGRAM_HOME/serve-token` (generated, mode 0600, on first
 * use), so that other users of the machine cannot connect by default.
 */
export function resolveServeConfig(flags: ServeFlags = {}, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const host = pick("host", flags.host, env);
  const hostValue = host?.value ?? DEFAULTS.host;
  if (/\s/.test(hostValue))
    throw new InvalidInputError(
      `${host?.from ?? "host"} ${JSON.stringify(hostValue)} must be an address or host name.`,
    );

  const port = pick("port", flags.port, env);
  const portValue = port ? integer(port.value, port.from, 0, 65535, "0 picks a free port") : DEFAULTS.port;

  const { token, tokenOrigin } = resolveToken(flags, env);
  if (!isLoopbackHost(hostValue) && token === undefined) {
    throw new InvalidInputError(
      `${host?.from ?? "host"} ${hostValue} is not a loopback address, so the dispatcher requires a token: leave out --no-token (a token is then generated), or pass --token-file or set OPENPROGRAM_TOKEN.`,
    );
  }

  const origins = pick("allowedOrigins", flags.allowedOrigins, env);
  const allowedOrigins = origins
    ? origins.value
        .split(",")
        .map((origin) => origin.trim())
        .filter((origin) => origin !== "")
        .map((origin) => normalizeOrigin(origin, origins.from))
    : [];

  const root = pick("sessionsRoot", flags.sessionsRoot, env);
  const sessionsRoot = root?.from === SERVE_SETTINGS.sessionsRoot.flag ? resolve(root.value) : defaultSessionsRoot(env);

  const grace = pick("graceMs", flags.graceMs, env);
  const shutdownGraceMs = grace
    ? integer(
        grace.value,
        grace.from,
        0,
        24 * 60 * 60 * 1000,
        "milliseconds running turns get before they are cancelled",
      )
    : DEFAULTS.shutdownGraceMs;

  const limits: Partial<ServerLimits> = {};
  for (const name of LIMIT_NAMES) {
    const setting = LIMIT_SETTINGS[name];
    const given = pick(setting, flags[setting], env);
    if (given)
      limits[name] = checkLimit(name, /^\d+$/.test(given.value) ? Number(given.value) : given.value, given.from);
  }

  const cluster = resolveCluster(flags, env);

  return {
    ...(cluster ? { cluster } : {}),
    host: hostValue,
    port: portValue,
    ...(token !== undefined ? { token } : {}),
    tokenOrigin,
    allowedOrigins,
    sessionsRoot,
    shutdownGraceMs,
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
  };
}

/** `--postgres` (with its lease TTL and pool size), or undefined for a single server. */
function resolveCluster(flags: ServeFlags, env: NodeJS.ProcessEnv): ClusterOptions | undefined {
  const url = pick("postgres", flags.postgres, env);
  const ttl = pick("leaseTtlMs", flags.leaseTtlMs, env);
  const pool = pick("pgPoolSize", flags.pgPoolSize, env);
  const secretFile = pick("clusterSecretFile", flags.clusterSecretFile, env);
  if (!url) {
    const stray = ttl ?? pool ?? (flags.clusterSecretFile !== undefined ? secretFile : null);
    if (stray)
      throw new InvalidInputError(
        `${stray.from} only applies to a cluster; add --postgres <url> (or OPENPROGRAM_POSTGRES_URL).`,
      );
    return undefined;
  }
  if (!/^postgres(ql)?:\/\//.test(url.value))
    throw new InvalidInputError(
      `${url.from} must be a postgres:// URL, e.g. postgres://openprogram@db:5432/openprogram (a password belongs in PGPASSWORD or ~/.pgpass).`,
    );
  return {
    postgresUrl: url.value,
    ...(ttl
      ? { leaseTtlMs: integer(ttl.value, ttl.from, 300, 600_000, "milliseconds a dead replica's lease lasts") }
      : {}),
    ...(pool ? { poolSize: integer(pool.value, pool.from, 2, 200, "pooled database connections") } : {}),
    ...clusterSecrets(secretFile, env),
  };
}

/** The secret file (flag over variable), else the secrets of OPENPROGRAM_CLUSTER_SECRET; checked when the cluster starts. */
function clusterSecrets(
  secretFile: { value: string; from: string } | null,
  env: NodeJS.ProcessEnv,
): Pick<ClusterOptions, "secrets" | "secretFile"> {
  if (secretFile) return { secretFile: resolve(secretFile.value) };
  const listed = (env[CLUSTER_SECRET_VARIABLE] ?? "").split(/\s+/).filter((secret) => secret !== "");
  return listed.length > 0 ? { secrets: listed } : {};
}

/** The token and where it came from: the first of --token, --token-file, their variables, the stored token. */
function resolveToken(flags: ServeFlags, env: NodeJS.ProcessEnv): { token?: string; tokenOrigin: TokenOrigin } {
  if (flags.noToken === true) {
    if (flags.token !== undefined || flags.tokenFile !== undefined)
      throw new InvalidInputError("--no-token cannot be combined with --token or --token-file; pass one of them.");
    return { tokenOrigin: { kind: "none" } };
  }
  if (flags.token !== undefined && flags.tokenFile !== undefined)
    throw new InvalidInputError("Pass either --token or --token-file, not both.");
  const given =
    flags.token !== undefined || flags.tokenFile !== undefined
      ? (pick("token", flags.token, {}) ?? pick("tokenFile", flags.tokenFile, {}))
      : (pick("token", undefined, env) ?? pick("tokenFile", undefined, env));
  if (given === null) {
    const stored = loadOrCreateServeToken(openProgramHome(env));
    return { token: stored.token, tokenOrigin: { kind: "stored", path: stored.path } };
  }
  if (given.from === SERVE_SETTINGS.tokenFile.flag || given.from === SERVE_SETTINGS.tokenFile.variable) {
    const path = resolve(given.value);
    return { token: readTokenFile(path, given.from), tokenOrigin: { kind: "file", name: given.from, path } };
  }
  assertUsableToken(given.value, given.from);
  const kind = given.from === SERVE_SETTINGS.token.flag ? "flag" : "environment";
  return { token: given.value, tokenOrigin: { kind, name: given.from } };
}

/** The flag's value if given, else the variable's; empty values count as unset. */
function pick(
  setting: Setting,
  flag: string | number | string[] | undefined,
  env: NodeJS.ProcessEnv,
): { value: string; from: string } | null {
  const { flag: flagName, variable } = SERVE_SETTINGS[setting];
  if (flag !== undefined) {
    const value = Array.isArray(flag) ? flag.join(",") : String(flag);
    if (value.trim() === "") throw new InvalidInputError(`${flagName} is empty; give it a value or leave it out.`);
    return { value: value.trim(), from: flagName };
  }
  const fromEnv = env[variable];
  if (fromEnv === undefined || fromEnv.trim() === "") return null;
  return { value: fromEnv.trim(), from: variable };
}

function integer(text: string, from: string, min: number, max: number, meaning: string): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidInputError(
      `${from} ${JSON.stringify(text)} must be an integer from ${min} to ${max} (${meaning}).`,
    );
  }
  return value;
}
