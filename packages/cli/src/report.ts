import type { SessionHandle } from "@openprogram/session-context";
import { failureLines, userFrames } from "@openprogram/session-context/store";
import { describeTurn } from "@openprogram/session-context/turns";
import type { CommandContext } from "./command-context.js";
import { exitCodeForError } from "./exit-codes.js";
import { formatError, sessionLine, summarizeError, writeJson, writeLine, type ErrorSummary } from "./output.js";

/** The session fields every --json output starts with. */
export interface TurnFields {
  session_id: string | null;
  created: boolean;
  turn_id: string | null;
}

/** The --json shape of a failure. */
export interface JsonFailure extends TurnFields {
  ok: false;
  error: ErrorSummary;
}

/** Session id, created and turn id of a handle (nulls before any session was entered, or once it was discarded). */
export function turnFields(handle: SessionHandle | null): TurnFields {
  return handle && !handle.discarded
    ? { session_id: handle.sessionId, created: handle.created, turn_id: handle.turnId }
    : { session_id: null, created: false, turn_id: null };
}

/** How a failure is reported. */
export interface FailureReport {
  json: boolean;
  /** Setup errors (flags, files, sessions, modules) exit 2; errors of the running program exit 1. */
  during: "setup" | "run";
  handle?: SessionHandle | null;
  /** Exit code of the signal that interrupted the turn, if one did. */
  interruptedExitCode?: number | null;
}

/**
 * Prints a failure (`error [code]: message` on stderr, the stack with
 * --verbose; the JSON failure object on stdout with --json; the session line
 * when a session was entered) and returns the exit code.
 */
export function reportFailure(context: CommandContext, error: unknown, report: FailureReport): number {
  const { io, verbose } = context;
  writeLine(io.stderr, formatError(error, verbose));
  // Where in the user's files it came from; --verbose prints the whole stack instead.
  if (!verbose && report.during === "run") {
    const where = failureLines({ ...summarizeError(error), frames: userFrames(error) }, { relativeTo: io.cwd });
    for (const line of where.slice(1)) writeLine(io.stderr, line);
  }
  // A refused run's new session was removed by the core (SessionHandle.discarded): nothing to point at.
  const handle = report.handle?.discarded ? null : (report.handle ?? null);
  if (report.handle?.discarded)
    writeLine(
      io.stderr,
      `session: ${report.handle.sessionId} removed (the run was refused before it recorded anything worth keeping)`,
    );
  if (handle) {
    const hint = report.during === "run" ? resumeHint(handle) : null;
    if (hint) writeLine(io.stderr, hint);
    writeLine(io.stderr, sessionLine(handle.sessionId));
  }
  if (report.json) {
    const failure: JsonFailure = { ok: false, ...turnFields(handle), error: summarizeError(error) };
    writeJson(io.stdout, failure);
  }
  if (report.interruptedExitCode) return report.interruptedExitCode;
  return exitCodeForError(summarizeError(error).code, report.during);
}

/**
 * What to do about the turn that just stopped: answer its question, resume it (when resuming can get further:
 * a cancellation, the model, the network, the store), or, for an error the program raised itself, fix the program
 * (resume would replay the same failure from the record).
 */
function resumeHint(handle: SessionHandle): string | null {
  try {
    const turn = describeTurn({ sessionId: handle.sessionId, db: handle.db });
    if (!turn.resumable) return null;
    if (turn.question)
      return `waiting: ${JSON.stringify(turn.question.question)}; \`openprogram answer ${handle.sessionId} <answer>\` continues the turn`;
    if (!turn.resumeHelps)
      return "The error came from the program itself: fix it and run it again (`openprogram resume` would replay the same failure from the record).";
    return `stopped: \`openprogram resume ${handle.sessionId}\` continues the turn where it stopped${replayNote(turn.finishedCalls)}`;
  } catch {
    return null; // nothing recorded to resume (e.g. a turn that wrote nothing)
  }
}

/** What a resume takes from the record instead of running (and paying for) again. */
export function replayNote(finished: number): string {
  if (finished === 0) return " (nothing had finished: it runs from the start)";
  return ` (${finished === 1 ? "the step that finished comes" : `the ${finished} steps that finished come`} from the record, not run again)`;
}
