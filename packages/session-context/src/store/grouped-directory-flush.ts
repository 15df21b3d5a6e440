import { fsyncPath } from "./fsync-path.js";

const ignore = (): void => undefined;

/**
 * fsync(2) of one directory, shared by the callers that ask while one is
 * already under way (group commit). A flush that began before a caller asked
 * may not cover that caller's change, so the caller waits for the next one,
 * which starts as soon as the running one ends and is shared by everyone who
 * asked meanwhile: each caller resolves only after an fsync that began after
 * it asked, and under a burst of creates the root is flushed about twice per
 * disk wait instead of once per create (each flush a trip to the thread pool
 * and a journal commit to wait for).
 */
export class GroupedDirectoryFlush {
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  constructor(private readonly path: string) {}

  /** Resolves once the directory's entries as they were at this call are on disk; rejects with the fsync's error. */
  flush(): Promise<void> {
    if (this.next) return this.next;
    if (!this.running) return this.start();
    this.next = this.running.then(ignore, ignore).then(() => {
      this.next = null;
      return this.start();
    });
    return this.next;
  }

  private start(): Promise<void> {
    const run: Promise<void> = fsyncPath(this.path).finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }
}
