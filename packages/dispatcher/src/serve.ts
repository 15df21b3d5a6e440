import { createDispatcher } from "./create-dispatcher.js";
import { createLogSink, type LogFormat, type LogSink, type LogStream } from "./logging.js";
import type { Dispatcher, DispatcherOptions } from "./options.js";
import type { TokenOrigin } from "./serve-config.js";

/** Options of `serve`: the dispatcher's, plus how to log. */
export type ServeOptions = DispatcherOptions & {
  /** "auto" (default): JSON lines unless stdout is a terminal. */
  logFormat?: LogFormat | "auto";
  /**
   * Where the token came from (resolveServeConfig says). A stored (generated)
   * token is printed once, in the page's URL (`page` event), since nobody
   * typed it; a token given on the command line is warned about, since every
   * user of the machine can read it in `ps`.
   */
  tokenOrigin?: TokenOrigin;
};

/** Where serve() writes and how it ends the process; replaceable for tests of serve() itself. */
export interface ServeProcess {
  stdout: LogStream;
  exit(code: number): void;
  on(signal: NodeJS.Signals, handler: () => void): unknown;
  off(signal: NodeJS.Signals, handler: () => void): unknown;
}

const SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/**
 * What `openprogram serve` runs: starts the dispatcher, prints the start
 * banner (configuration without secrets) and one log line per event to
 * stdout (JSON lines when stdout is not a terminal), and on SIGTERM or
 * SIGINT shuts down gracefully and exits 0. A second signal during the
 * shutdown exits at once with 1.
 */
export async function serve(options: ServeOptions = {}, host: ServeProcess = process): Promise<Dispatcher> {
  const { logFormat, log: extraSink, tokenOrigin, ...dispatcherOptions } = options;
  const stdoutSink = createLogSink({ format: logFormat ?? "auto", stream: host.stdout });
  const sink: LogSink = extraSink
    ? (entry) => {
        stdoutSink(entry);
        extraSink(entry);
      }
    : stdoutSink;
  // Handlers go in before the server starts: the start line may be read (and a
  // signal sent) the moment it is printed.
  let dispatcher: Dispatcher | null = null;
  let received: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (received !== null) {
      sink({ time: new Date().toISOString(), level: "error", event: "forced_exit", signal });
      host.exit(1);
      return;
    }
    received = signal;
    sink({ time: new Date().toISOString(), level: "info", event: "signal", signal });
    if (dispatcher) shutDownAndExit(dispatcher, signal);
  };
  const shutDownAndExit = (running: Dispatcher, signal: NodeJS.Signals): void => {
    running.shutdown(`received ${signal}`).then(
      () => host.exit(0),
      (error: unknown) => {
        sink({
          time: new Date().toISOString(),
          level: "error",
          event: "shutdown_failed",
          message: (error as Error).message,
        });
        host.exit(1);
      },
    );
  };
  const handlers = new Map(SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const));
  for (const [signal, handler] of handlers) host.on(signal, handler);
  const removeHandlers = (): void => {
    for (const [signal, handler] of handlers) host.off(signal, handler);
  };

  try {
    dispatcher = await createDispatcher({ ...dispatcherOptions, log: sink });
  } catch (error) {
    removeHandlers();
    throw error;
  }
  const started = dispatcher;
  announceToken(sink, started, options.token, tokenOrigin);
  // A signal that arrived while the server was starting is honoured now.
  const early = received as NodeJS.Signals | null;
  if (early !== null) shutDownAndExit(started, early);

  return {
    url: started.url,
    wsUrl: started.wsUrl,
    port: started.port,
    host: started.host,
    shutdown: async (reason) => {
      try {
        await started.shutdown(reason);
      } finally {
        if (received === null) removeHandlers();
      }
    },
    close: async () => {
      try {
        await started.close();
      } finally {
        if (received === null) removeHandlers();
      }
    },
  };
}

/**
 * Straight to the sink, past the logger's redaction: the one line that
 * carries a generated token, so that the page can be opened with it.
 */
function announceToken(
  sink: LogSink,
  dispatcher: Dispatcher,
  token: string | undefined,
  origin: TokenOrigin | undefined,
): void {
  const time = new Date().toISOString();
  if (origin?.kind === "stored" && token !== undefined) {
    sink({
      time,
      level: "info",
      event: "page",
      url: `${dispatcher.url}/?token=${encodeURIComponent(token)}`,
      token_file: origin.path,
      hint: "open this address; the token stays in the file (mode 0600) and is reused on every start. --no-token runs without one.",
    });
  } else if (origin?.kind === "flag") {
    sink({
      time,
      level: "warn",
      event: "token_on_command_line",
      hint: "every user of this machine can read --token in ps; use --token-file or OPENPROGRAM_TOKEN instead",
    });
  } else if (origin?.kind === "none") {
    sink({
      time,
      level: "warn",
      event: "no_token",
      hint: "every user of this machine can connect, list, answer and delete sessions; leave out --no-token on a shared machine",
    });
  }
}
