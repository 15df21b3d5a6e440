// Write errors on stdout must not be lost: `sessions export <id> > /dev/full`
// exited 0 with an empty backup (issue 13 item 11). Deliberately free of the
// core's import, like output.ts.

/** Watches a stream for write errors from the moment it is created. */
export interface OutputGuard {
  /**
   * Waits until everything written so far has been handed to the system
   * (or has failed) and resolves to the first write error, or null.
   */
  settle(): Promise<NodeJS.ErrnoException | null>;
  /** Stops watching. */
  dispose(): void;
}

/** Starts watching `stream`; its write errors are recorded (and no longer crash the process). */
export function guardOutput(stream: NodeJS.WritableStream): OutputGuard {
  let failure: NodeJS.ErrnoException | null = null;
  const record = (error: NodeJS.ErrnoException): void => {
    // A system error (ENOSPC, EPIPE) says more than Node's "stream destroyed" that follows it.
    if (failure === null || (failure.code?.startsWith("ERR_STREAM") && !error.code?.startsWith("ERR_STREAM")))
      failure = error;
  };
  stream.on("error", record);
  return {
    async settle() {
      await new Promise<void>((resolve) => {
        try {
          stream.write("", (error) => {
            if (error) record(error);
            resolve();
          });
        } catch (error) {
          record(error as NodeJS.ErrnoException);
          resolve();
        }
      });
      // An 'error' event of a failed write may still be on its way.
      await new Promise((resolve) => setImmediate(resolve));
      return failure;
    },
    dispose() {
      stream.off("error", record);
    },
  };
}
