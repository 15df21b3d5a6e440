import type { ProcessRunnerModule } from "./contracts.js";
import type { ProgramSpec } from "./program-spec.js";

/**
 * Runs the program in a child process through the process runner (which
 * carries this turn's session, turn and caller across) and stops the child,
 * gracefully first, when `signal` aborts.
 */
export async function runIsolated(
  runner: ProcessRunnerModule,
  spec: ProgramSpec,
  input: unknown,
  signal: AbortSignal,
  cwd: string,
): Promise<unknown> {
  const run = runner.runInChild<unknown>({
    module: spec.modulePath,
    ...(spec.exportName !== undefined ? { export: spec.exportName } : {}),
    input,
    cwd,
  });
  const stop = (): void => {
    const reason: unknown = signal.reason instanceof Error ? signal.reason.message : signal.reason;
    run.stop(typeof reason === "string" ? reason : "cancelled").catch(() => undefined);
  };
  if (signal.aborted) stop();
  else signal.addEventListener("abort", stop, { once: true });
  try {
    return await run.result;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}
