/** Options of `runInChild`. */
export interface RunInChildOptions {
  /** Path (absolute, or relative to `cwd`) or file: URL of the module; `.ts` modules need tsx. */
  module: string;
  /**
   * The exported agentic function to run. Absent: the agentic default export,
   * else the only agentic export (the core's `resolveAgenticExport`, the rule
   * every entry uses).
   */
  export?: string;
  /** Its one input object; it must be plain JSON (it crosses the process boundary). */
  input?: unknown;
  /** Stop the child after this long and reject with ChildTimeoutError. Default: no limit. */
  timeoutMs?: number;
  /** How long a stop waits for the child to cancel its own work before SIGKILL of its process group (default 2000). */
  graceMs?: number;
  /** Added to the child's environment (the parent's environment is inherited; provider settings travel this way). */
  env?: Record<string, string>;
  /** The child's working directory (default: the parent's). */
  cwd?: string;
}

/** A running child: await it (or `result`) for the function's output; `stop()` ends it. */
export interface ChildRun<T> extends PromiseLike<T> {
  /** Resolves to the function's result; rejects with its error (class name, code and message kept). */
  readonly result: Promise<T>;
  /** The child's pid (also its process group id); undefined when no child was started. */
  readonly pid: number | undefined;
  /**
   * Aborts the child's signal (its running nodes are recorded `cancelled`);
   * after `graceMs` kills its whole process group with SIGKILL and records the
   * nodes it left running as `killed`. Resolves once the child is gone.
   */
  stop(reason?: string): Promise<void>;
}
