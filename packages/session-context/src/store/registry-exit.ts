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
