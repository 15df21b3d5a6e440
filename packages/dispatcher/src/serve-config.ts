import { resolve } from "node:path";
import { defaultSessionsRoot, InvalidInputError } from "@openprogram/session-context";
import { isLoopbackHost } from "./loopback.js";
import { assertUsableToken, DEFAULTS, normalizeOrigin, type DispatcherOptions } from "./options.js";

/** The command-line flags of `openprogram serve` that configure the dispatcher (as parsed, strings allowed). */
export interface ServeFlags {
  host?: string;
  port?: string | number;
  token?: string;
  /** Comma-separated, or a list. */
  allowedOrigins?: string | string[];
  sessionsRoot?: string;
  graceMs?: string | number;
}

/** Flag and environment variable of each setting, for messages and the README. */
export const SERVE_SETTINGS = {
  host: { flag: "--host", variable: "OPENPROGRAM_HOST" },
  port: { flag: "--port", variable: "OPENPROGRAM_PORT" },
  token: { flag: "--token", variable: "OPENPROGRAM_TOKEN" },
  allowedOrigins: { flag: "--allowed-origin", variable: "OPENPROGRAM_ALLOWED_ORIGINS" },
  sessionsRoot: { flag: "--sessions-root", variable: "OPENPROGRAM_HOME" },
  graceMs: { flag: "--grace-ms", variable: "OPENPROGRAM_SHUTDOWN_GRACE_MS" },
} as const;

type Setting = keyof typeof SERVE_SETTINGS;

/**
 * The dispatcher's configuration from flags over the environment
 * (OPENPROGRAM_HOST, OPENPROGRAM_PORT, OPENPROGRAM_TOKEN,
 * OPENPROGRAM_ALLOWED_ORIGINS, OPENPROGRAM_HOME for the sessions root,
 * OPENPROGRAM_SHUTDOWN_GRACE_MS). Programs are not included. Every invalid
 * value throws InvalidInputError naming the flag or variable it came from.
 */
export function resolveServeConfig(flags: ServeFlags = {}, env: NodeJS.ProcessEnv = process.env): DispatcherOptions {
  const host = pick("host", flags.host, env);
  const hostValue = host?.value ?? DEFAULTS.host;
  if (/\s/.test(hostValue))
    throw new InvalidInputError(
      `${host?.from ?? "host"} ${JSON.stringify(hostValue)} must be an address or host name.`,
    );

  const port = pick("port", flags.port, env);
  const portValue = port ? integer(port.value, port.from, 0, 65535, "0 picks a free port") : DEFAULTS.port;

  const token = pick("token", flags.token, env);
  if (token) assertUsableToken(token.value, token.from);
  if (!isLoopbackHost(hostValue) && !token) {
    throw new InvalidInputError(
      `${host?.from ?? "host"} ${hostValue} is not a loopback address, so the dispatcher requires a token: pass --token or set OPENPROGRAM_TOKEN.`,
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

  return {
    host: hostValue,
    port: portValue,
    ...(token ? { token: token.value } : {}),
    allowedOrigins,
    sessionsRoot,
    shutdownGraceMs,
  };
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
