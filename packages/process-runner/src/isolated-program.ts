import { runInChild } from "./run-in-child.js";
import type { RunInChildOptions } from "./types.js";

/** A program the dispatcher (or any caller inside a session context) runs in a child process. */
export interface IsolatedProgram {
  run(input: unknown): Promise<unknown>;
  description?: string;
}

/**
 * Wraps `module#export` as `{ run(input) }`, the dispatcher's second
 * `ProgramEntry` form: each run happens in its own child process inside the
 * caller's session context (the dispatcher's turn, `openprogram run --isolate`).
 * Cancelling that context's signal stops the child.
 */
export function isolatedProgram(options: Omit<RunInChildOptions, "input"> & { description?: string }): IsolatedProgram {
  const { description, ...launch } = options;
  return {
    ...(description !== undefined ? { description } : {}),
    run: (input) => runInChild({ ...launch, input }).result,
  };
}
