import { TurnSuspendedError } from "@openprogram/session-context";
import { EXIT_CODES } from "./exit-codes.js";
import { writeLine } from "./output.js";
import type { CliIo } from "./io.js";

/** Cancels the running turn on Ctrl-C (SIGINT) or SIGTERM. */
export interface Interruption {
  /** Passed to sessionContext: the current turn's signal, aborted by the first signal during the turn. */
  readonly signal: AbortSignal;
  /** The last signal received, if any. */
  readonly received: NodeJS.Signals | null;
  /** The exit code for the last signal received (130 for SIGINT, 143 for SIGTERM), or null. */
  exitCode(): number | null;
  /** Removes the handlers. */
  dispose(): void;
}

/** An Interruption for a command of several turns (chat), which waits between them. */
export interface TurnsInterruption extends Interruption {
  /** A turn begins: returns its signal, which the next signal aborts. */
  beginTurn(): AbortSignal;
  /** The turn ended: until the next one begins, a signal goes to `betweenTurns`. */
  endTurn(): void;
  /** Handles a signal that arrived another way (readline's own "SIGINT" on a terminal in raw mode). */
  interrupt(signal: NodeJS.Signals): void;
}

const SIGNAL_EXIT_CODES: Partial<Record<NodeJS.Signals, number>> = {
  SIGINT: EXIT_CODES.interrupted,
  SIGTERM: EXIT_CODES.terminated,
};

/**
 * Installs SIGINT and SIGTERM handlers for a command of one turn (run,
 * research): the first signal aborts the turn (running nodes are recorded
 * cancelled, the turn is committed); a second one exits at once, for a
 * program that ignores its signal.
 */
export function interruptOnSignals(io: CliIo): Interruption {
  return watchSignals(io, null);
}

/**
 * The same handlers for a command of several turns (chat): during a turn the
 * first signal cancels it and a second exits at once, as for one turn;
 * between turns a signal calls `betweenTurns` (chat leaves).
 */
export function interruptTurnsOnSignals(io: CliIo, betweenTurns: (signal: NodeJS.Signals) => void): TurnsInterruption {
  return watchSignals(io, betweenTurns);
}

function watchSignals(io: CliIo, betweenTurns: ((signal: NodeJS.Signals) => void) | null): TurnsInterruption {
  let controller = new AbortController();
  // A command of one turn is in it from the start; one of several waits for beginTurn().
  let inTurn = betweenTurns === null;
  let received: NodeJS.Signals | null = null;
  const exitCodeOf = (signal: NodeJS.Signals): number => SIGNAL_EXIT_CODES[signal] ?? EXIT_CODES.interrupted;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (inTurn && controller.signal.aborted) {
      writeLine(io.stderr, `\n${signal} again: exiting without waiting (the session keeps what was recorded).`);
      process.exit(exitCodeOf(signal));
    }
    received = signal;
    if (!inTurn) {
      betweenTurns?.(signal);
      return;
    }
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
    get signal() {
      return controller.signal;
    },
    get received() {
      return received;
    },
    exitCode: () => (received === null ? null : exitCodeOf(received)),
    beginTurn: () => {
      controller = new AbortController();
      inTurn = true;
      return controller.signal;
    },
    endTurn: () => {
      inTurn = false;
    },
    interrupt: onSignal,
    dispose: () => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
