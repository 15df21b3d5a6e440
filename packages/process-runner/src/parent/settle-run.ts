import {
  CancelledError,
  deserializeError,
  InvalidInputError,
  NotAgenticFunctionError,
  type SerializedError,
} from "@openprogram/session-context";
import { ChildProcessError, ChildTimeoutError, type ChildExit } from "../errors.js";
import type { LoadFailure } from "../protocol.js";

/** What the child reported before it ended, if anything. */
export type ReportedOutcome =
  | { kind: "result"; value: unknown }
  | { kind: "error"; error: SerializedError }
  | { kind: "load_error"; failure: LoadFailure; message: string }
  | { kind: "unsendable_result"; message: string };

/** Why the parent ended the child, if it did. */
export type StopRequest =
  | { kind: "stop"; reason: string; suspend?: boolean }
  | { kind: "timeout"; reason: string; timeoutMs: number }
  | { kind: "failure"; reason: string; error: unknown };

/** Everything known once the child is gone. */
export interface RunEnding {
  label: string;
  pid: number | undefined;
  outcome: ReportedOutcome | null;
  stop: StopRequest | null;
  exit: ChildExit | null;
  spawnError: Error | null;
}

/**
 * The run's settlement. A reported result always wins (the work is done);
 * otherwise the parent's reason for stopping it; otherwise the child's own
 * error; otherwise how the process ended.
 */
export function settleRun(ending: RunEnding): { ok: true; value: unknown } | { ok: false; error: Error } {
  const { outcome, stop } = ending;
  if (outcome?.kind === "result") return { ok: true, value: outcome.value };
  const reported = outcome ? reportedError(outcome, ending) : null;
  if (stop) {
    switch (stop.kind) {
      case "stop":
        return { ok: false, error: new CancelledError(stop.reason) };
      case "timeout":
        return {
          ok: false,
          error: new ChildTimeoutError(
            `${ending.label} did not finish within ${stop.timeoutMs} ms, so its child process was stopped.`,
            stop.timeoutMs,
            {
              cause: reported ?? undefined,
            },
          ),
        };
      case "failure":
        return { ok: false, error: stop.error instanceof Error ? stop.error : new Error(stop.reason) };
    }
  }
  if (reported) return { ok: false, error: reported };
  if (ending.spawnError) {
    return {
      ok: false,
      error: new ChildProcessError(
        `Could not start a child process for ${ending.label}: ${ending.spawnError.message}`,
        ending.pid,
        ending.exit,
        {
          cause: ending.spawnError,
        },
      ),
    };
  }
  return { ok: false, error: new ChildProcessError(describeEnd(ending), ending.pid, ending.exit) };
}

function reportedError(outcome: Exclude<ReportedOutcome, { kind: "result" }>, ending: RunEnding): Error {
  if (outcome.kind === "error") return deserializeError(outcome.error);
  if (outcome.kind === "unsendable_result") return new ChildProcessError(outcome.message, ending.pid, ending.exit);
  switch (outcome.failure) {
    case "not_agentic":
      return new NotAgenticFunctionError(outcome.message);
    case "unusable_export":
    case "import_failed":
      return new InvalidInputError(outcome.message);
  }
}

function describeEnd(ending: RunEnding): string {
  const who = `The child process running ${ending.label}${ending.pid === undefined ? "" : ` (pid ${ending.pid})`}`;
  const exit = ending.exit;
  if (exit?.signal) {
    return `${who} was killed by ${exit.signal} before reporting a result${exit.signal === "SIGKILL" ? " (killed from outside, or by the kernel for lack of memory)" : ""}.`;
  }
  if (exit?.code !== null && exit?.code !== undefined)
    return `${who} exited with code ${exit.code} before reporting a result.`;
  return `${who} closed its channel to the parent before reporting a result.`;
}
