import type { ProgramEntry } from "@openprogram/session-context/host";
import { runInChild } from "./run-in-child.js";
import type { RunInChildOptions } from "./types.js";

/**
 * Wraps `module[#export]` as a `ProgramEntry`: each `run(input)` happens in
 * its own child process inside the caller's session context (a dispatcher's
 * turn, `openprogram run --isolate`), so cancelling that context's signal
 * stops the child. Without `export`, the child picks the same export an
 * in-process run would.
 */
export function isolatedProgram(options: Omit<RunInChildOptions, "input"> & { description?: string }): ProgramEntry {
  const { description, ...launch } = options;
  return {
    ...(description !== undefined ? { description } : {}),
    run: (input) => runInChild({ ...launch, input }).result,
  };
}
