// @openprogram/process-runner: agentic functions in a child process, with the
// caller's session context carried across. Entry file: exports only.

export { runInChild } from "./run-in-child.js";
export { isolatedProgram } from "./isolated-program.js";
export type { ChildRun, RunInChildOptions } from "./types.js";
export { ChildProcessError, ChildTimeoutError, type ChildExit, type ProcessRunnerErrorCode } from "./errors.js";
export { DEFAULT_GRACE_MS } from "./parent/launch-plan.js";
