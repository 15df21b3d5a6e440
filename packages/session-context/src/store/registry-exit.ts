/** What the exit hook needs of a registry. */
interface Flushable {
  hasPending(): boolean;
  flush(): Promise<void>;
  flushSync(): void;
  flushAtExit(): void;
}

const registries = new Set<Flushable>();
let installed = false;

/**
 * Makes sure a registry's queued changes reach index.json before the process
 * ends: a process whose work is done flushes asynchronously before it exits
 * ("beforeExit"), and one that calls process.exit() flushes synchronously in
 * its "exit" handler. A process killed outright loses its queued changes,
 * which is what the registry, a cache, is made to survive (registry.ts).
 */
export function flushOnExit(registry: Flushable): void {
  registries.add(registry);
  if (installed) return;
  installed = true;
  process.on("beforeExit", () => {
    for (const waiting of registries) {
      registries.delete(waiting);
      if (waiting.hasPending()) void waiting.flush();
    }
  });
  process.on("exit", () => {
    for (const waiting of registries) waiting.flushAtExit();
    registries.clear();
  });
}

/**
 * Writes every registry's queued changes now, waiting for the registry lock as
 * long as any write does. A process about to call process.exit() awaits this
 * first: the exit hook's synchronous flush can wait only briefly for a lock
 * another process holds (a sibling's flush on a slow disk), and gives up then.
 */
export async function flushQueuedWrites(): Promise<void> {
  await Promise.all([...registries].filter((registry) => registry.hasPending()).map((registry) => registry.flush()));
}
