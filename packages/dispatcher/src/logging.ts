// One structured entry per event. `serve()` writes them to stdout: a JSON line
// each when stdout is not a terminal (for journald, Docker, log shippers), a
// readable line on a terminal. Entries carry ids, counts and durations, never
// the content of prompts, answers or results, and never the token.
import { terminalText } from "@openprogram/session-context/messages";

/** How serious an entry is. */
export type LogLevel = "info" | "warn" | "error";

/** One log event: `time` (ISO 8601), `level`, `event`, and plain fields. */
export interface LogEntry {
  time: string;
  level: LogLevel;
  event: string;
  [field: string]: unknown;
}

/** Receives log entries; must not throw (a throwing sink is ignored, never fatal). */
export type LogSink = (entry: LogEntry) => void;

/** How entries are written: JSON lines, or readable lines. */
export type LogFormat = "json" | "human";

/** A stream log lines go to (process.stdout by default). */
export interface LogStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** Emits entries with the time and level filled in and secrets redacted. */
export interface EventLogger {
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
}

const REDACTED = "[redacted]";

/** "auto" picks JSON lines unless the stream is a terminal. */
export function resolveLogFormat(format: LogFormat | "auto" = "auto", stream: LogStream = process.stdout): LogFormat {
  if (format === "json" || format === "human") return format;
  return stream.isTTY === true ? "human" : "json";
}

/** One JSON line (with its newline). */
export function jsonLogLine(entry: LogEntry): string {
  return `${JSON.stringify(entry)}\n`;
}

/** A readable line (the `start` event becomes a short banner), control characters escaped (terminalText). */
export function humanLogLine(entry: LogEntry): string {
  return terminalText(readableLine(entry));
}

function readableLine(entry: LogEntry): string {
  const { time, level, event, ...fields } = entry;
  if (event === "start") return startBanner(fields);
  if (event === "page")
    return `  open the page:   ${String(fields.url)}\n  (token kept in ${String(fields.token_file)}; --no-token runs without one)\n`;
  const clock = time.slice(11, 23);
  const details = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" ? quoteIfNeeded(value) : JSON.stringify(value)}`)
    .join(" ");
  return `${clock} ${level.toUpperCase().padEnd(5)} ${event}${details ? ` ${details}` : ""}\n`;
}

/** A sink that writes each entry to `stream` as a JSON line or a readable line. */
export function createLogSink(options: { format?: LogFormat | "auto"; stream?: LogStream } = {}): LogSink {
  const stream = options.stream ?? process.stdout;
  const format = resolveLogFormat(options.format ?? "auto", stream);
  const render = format === "json" ? jsonLogLine : humanLogLine;
  return (entry) => {
    stream.write(render(entry));
  };
}

/** A copy of `value` with every occurrence of a secret replaced by "[redacted]". */
export function redactSecrets<T>(value: T, secrets: readonly string[]): T {
  const active = secrets.filter((secret) => secret.length > 0);
  if (active.length === 0) return value;
  const walk = (item: unknown): unknown => {
    if (typeof item === "string") return active.reduce((text, secret) => text.split(secret).join(REDACTED), item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === "object")
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    return item;
  };
  return walk(value) as T;
}

/** An EventLogger over `sink` (or a no-op), redacting `secrets` from every entry. */
export function createEventLogger(sink: LogSink | undefined, secrets: readonly string[] = []): EventLogger {
  const emit = (level: LogLevel, event: string, fields: Record<string, unknown> = {}): void => {
    if (!sink) return;
    try {
      sink(redactSecrets({ time: new Date().toISOString(), level, event, ...fields }, secrets));
    } catch {
      // A broken log sink must never take a turn or the server down with it.
    }
  };
  return {
    info: (event, fields) => emit("info", event, fields),
    warn: (event, fields) => emit("warn", event, fields),
    error: (event, fields) => emit("error", event, fields),
  };
}

function startBanner(fields: Record<string, unknown>): string {
  const rows: Array<[string, unknown]> = [
    ["web page", fields.url],
    ["websocket", fields.ws_url],
    ["sessions root", fields.sessions_root],
    ["programs", Array.isArray(fields.programs) && fields.programs.length > 0 ? fields.programs.join(", ") : "(none)"],
    ["provider", fields.provider],
    ["token", fields.token],
    [
      "allowed origins",
      Array.isArray(fields.allowed_origins) && fields.allowed_origins.length > 0
        ? fields.allowed_origins.join(", ")
        : "same host only",
    ],
    ["shutdown grace", `${String(fields.shutdown_grace_ms)} ms`],
    ["limits", describeLimits(fields.limits)],
  ];
  const version = typeof fields.version === "string" ? ` ${fields.version}` : "";
  const lines = [`OpenProgram dispatcher${version} listening on ${String(fields.url)}`];
  for (const [label, value] of rows) lines.push(`  ${`${label}:`.padEnd(17)}${String(value)}`);
  return `${lines.join("\n")}\n`;
}

function describeLimits(value: unknown): string {
  if (value === null || typeof value !== "object") return "defaults";
  const limits = value as Record<string, unknown>;
  return (
    `${String(limits.maxConcurrentTurns)} turns, ${String(limits.maxConnections)} connections ` +
    `(${String(limits.maxConnectionsPerAddress)} per address, ${String(limits.loopbackHealthSlots)} more for local health checks); ` +
    `timeouts: headers ${String(limits.headersTimeoutMs)} ms (${String(limits.unauthenticatedHeadersTimeoutMs)} ms without the token), ` +
    `request ${String(limits.requestTimeoutMs)} ms, keep-alive ${String(limits.keepAliveTimeoutMs)} ms, ` +
    `idle WebSocket ${limits.wsIdleTimeoutMs === 0 ? "never" : `${String(limits.wsIdleTimeoutMs)} ms`}; ` +
    `unread frames per client ${String(limits.maxUnsentBytes)} bytes`
  );
}

function quoteIfNeeded(value: string): string {
  return /^[^\s"=]*$/.test(value) && value !== "" ? value : JSON.stringify(value);
}
