/**
 * Sends `signal` to every process in the group led by `pid` (the child was
 * started detached, so its pid is its group id and its own children share
 * it). Returns false when the group no longer exists. Never throws: it runs
 * from timers and clean-up, and a failure other than "no such group" is
 * reported as a process warning (processes may have survived).
 */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ESRCH") {
      process.emitWarning(
        `Could not send ${signal} to the process group ${pid} (${code ?? (error as Error).message}); some of its processes may still run.`,
        {
          code: "OPENPROGRAM_PROCESS_GROUP",
        },
      );
    }
    return false;
  }
}
