import { TurnSuspendedError } from "@openprogram/session-context";
import { EXIT_CODES } from "./exit-codes.js";
import { writeLine } from "./output.js";
import type { CliIo } from "./io.js";

/** Cancels the running turn on Ctrl-C (SIGINT) or SIGTERM. */
export interface Interruption {
  /** Passed to sessionContext: aborts on the first signal. */
  readonly signal: AbortSignal;
  /** The signal that interrupted the turn, if one did. */
  readonly received: NodeJS.Signals | null;
  /** The exit code for the signal received (130 for SIGINT, 143 for SIGTERM), or null. */
  exitCode(): number | null;
  /** Removes the handlers. */
  dispose(): void;
}

const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = {
  SIGINT: EXIT_CODES.interrupted,
  SIGTERM: EXIT_CODES.terminated,
};

/**
 * Installs SIGINT and SIGTERM handlers for one command: the first signal
 * aborts the turn (running nodes are recorded cancelled, the turn is
 * committed); a second one exits at once, for a program that ignores its signal.
 */
export function interruptOnSignals(io: CliIo): Interruption {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const onSignal = (signal: NodeJS.Signals): void => {
    const code = SIGNAL_EXIT_CODES[signal] ?? EXIT_CODES.interrupted;
    if (received !== null) {
      writeLine(io.stderr, `\n${signal} again: exiting without waiting (the session keeps what was recorded).`);
      process.exit(code);
    }
    received = signal;
    writeLine(
      io.stderr,
      `\n${signal === "SIGINT" ? "Ctrl-C" : signal}: cancelling the turn... (press Ctrl-C again to exit at once)`,
    );
    // Suspended, not abandoned: a question waiting now stays waiting on disk (`openprogram answer` continues it).
    controller.abort(new TurnSuspendedError(`interrupted by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    get received() {
      return received;
    },
    exitCode: () => (received === null ? null : (SIGNAL_EXIT_CODES[received] ?? EXIT_CODES.interrupted)),
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
