import { OpenProgramError, type ErrorCodesOf } from "@openprogram/session-context";
import type * as ProcessRunnerErrors from "./errors.js";

/** How a child process ended: an exit code, or the signal that killed it. */
export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * The child process could not be started, or ended without reporting a
 * result: it exited (e.g. `process.exit(3)`), was killed by a signal, or its
 * channel to the parent broke. `exit` says which.
 */
export class ChildProcessError extends OpenProgramError {
  readonly code = "child_process_failed";
  constructor(
    message: string,
    readonly pid: number | undefined,
    readonly exit: ChildExit | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The child did not finish within `timeoutMs`; it was stopped (gracefully, then killed). */
export class ChildTimeoutError extends OpenProgramError {
  readonly code = "child_timeout";
  constructor(
    message: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The codes of this package's errors, for tables keyed by code (the core's are its `ErrorCode`). */
export type ProcessRunnerErrorCode = ErrorCodesOf<typeof ProcessRunnerErrors>;
