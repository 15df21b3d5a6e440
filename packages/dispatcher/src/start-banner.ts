import type { SessionDB } from "@openprogram/session-context";
import { resolveRuntimeConfig } from "@openprogram/session-context/runtime";
import type { EventLogger } from "./logging.js";
import type { DispatcherOptions, NormalizedOptions } from "./options.js";
import type { ProgramRegistry } from "./programs.js";
import { redactUrl } from "./cluster/pool.js";
import { DISPATCHER_VERSION } from "./version.js";

/** Logs the `start` event: the configuration without secrets (the banner `serve()` prints). */
export function logStart(
  log: EventLogger,
  settings: NormalizedOptions,
  port: number,
  url: string,
  db: SessionDB,
  programs: ProgramRegistry,
  options: DispatcherOptions,
): void {
  log.info("start", {
    version: DISPATCHER_VERSION,
    url,
    ws_url: `${url.replace(/^http/, "ws")}/ws`,
    host: settings.host,
    port,
    sessions_root: db.root,
    programs: programs.names(),
    provider: describeProvider(options),
    token: settings.token ? "required" : "not required (loopback only)",
    allowed_origins: settings.allowedOrigins,
    shutdown_grace_ms: settings.shutdownGraceMs,
    limits: settings.limits,
    // The database without its password.
    cluster: options.cluster ? redactUrl(options.cluster.postgresUrl) : "none (a single server)",
    pid: process.pid,
  });
  if (settings.token && settings.token.length < 16)
    log.warn("weak_token", {
      length: settings.token.length,
      hint: "use at least 16 random characters, e.g. openssl rand -hex 24",
    });
}

/** The provider without secrets: name, model and where the setting came from. */
function describeProvider(options: DispatcherOptions): string {
  if (options.runtime === null) return "none (runtime: null)";
  if (options.runtime) return `${options.runtime.provider.name} (${options.runtime.model}), given in code`;
  const replay = process.env.OPENPROGRAM_REPLAY;
  if (replay) return `replaying ${replay} (offline, no provider is called)`;
  try {
    const resolved = resolveRuntimeConfig();
    if (resolved.explicitlyNone) return `none (${resolved.origin})`;
    if (!resolved.config) return "none configured: chat turns will fail; set OPENPROGRAM_PROVIDER";
    const base = resolved.config.baseUrl ? ` at ${withoutCredentials(resolved.config.baseUrl)}` : "";
    return `${resolved.config.provider} (${resolved.config.model ?? "default model"})${base}, from ${resolved.origin}`;
  } catch (error) {
    return `misconfigured: ${(error as Error).message}`;
  }
}

function withoutCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    url.username = "";
    url.password = "";
    url.search = "";
    return url.toString();
  } catch {
    return "(unparsable base URL)";
  }
}
