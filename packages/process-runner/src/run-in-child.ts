import {
  CancelledError,
  currentSignal,
  hasSessionContext,
  SessionContextMissingError,
} from "@openprogram/session-context";
import { ChildSupervisor } from "./parent/child-supervisor.js";
import { planLaunch } from "./parent/launch-plan.js";
import type { ChildRun, RunInChildOptions } from "./types.js";

/**
 * Runs an exported agentic function in a child Node process, in its own
 * process group, as part of the current turn: the child enters
 * `sessionContext` with this session, turn and calling node, so its nodes hang
 * under the current call exactly as if it had run here. Its events reach this
 * context's `onEvent` in order and its questions this context's asker.
 *
 * Call it inside `sessionContext`. Bad input (a module that does not exist,
 * input that is not plain JSON, ...) rejects before any process starts; an
 * export that is not an agentic function rejects before anything runs.
 */
export function runInChild<T = unknown>(options: RunInChildOptions): ChildRun<T> {
  let supervisor: ChildSupervisor<T>;
  try {
    if (!hasSessionContext()) throw new SessionContextMissingError("runInChild()");
    const signal = currentSignal();
    if (signal.aborted) throw new CancelledError(signal.reason);
    supervisor = new ChildSupervisor<T>(planLaunch(options));
  } catch (error) {
    return notStarted<T>(error);
  }
  // stop() callers often never await the result; its rejection is theirs to read, not an unhandled one.
  supervisor.result.catch(() => undefined);
  return {
    result: supervisor.result,
    pid: supervisor.pid,
    stop: (reason = "stop() was called") => supervisor.stop(reason),
    then: (onFulfilled, onRejected) => supervisor.result.then(onFulfilled, onRejected),
  };
}

function notStarted<T>(error: unknown): ChildRun<T> {
  const result = Promise.reject<T>(error instanceof Error ? error : new Error(String(error)));
  result.catch(() => undefined);
  return {
    result,
    pid: undefined,
    stop: () => Promise.resolve(),
    then: (onFulfilled, onRejected) => result.then(onFulfilled, onRejected),
  };
}
