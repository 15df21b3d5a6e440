// Two checkouts' built cores loaded side by side in one bench process (this one and another: main in a
// worktree, say), for the compare-* benches that run them in alternating rounds.
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

/** What the compare benches use of a checkout's core (its dist/, typed loosely: the two builds may differ). */
export interface Core {
  sessionContext: (options: object, fn: (session: { sessionId: string }) => Promise<unknown>) => Promise<unknown>;
  chat: (text: string) => Promise<unknown>;
  SessionDB: new (options: { root: string }) => {
    createSession(options: object): Promise<{ id: string }>;
    flushRegistry(): Promise<void>;
  };
}

/** What they use of its testing entry. */
export interface Testing {
  scriptedRuntime: (replies: string[]) => { runtime: unknown };
}

/**
 * A checkout's root entry and its `/store` and `/runtime` entries in one object (a checkout from before the subpaths has SessionDB
 * in its root, and no entries/ folder).
 */
export async function loadCore(dist: string): Promise<unknown> {
  const files = ["index.js", "entries/store.js", "entries/runtime.js"].filter((file) => existsSync(join(dist, file)));
  const modules = await Promise.all(
    files.map((file) => import(pathToFileURL(join(dist, file)).href) as Promise<Record<string, unknown>>),
  );
  return Object.assign({}, ...modules) as unknown;
}

async function load(root: string): Promise<{ core: Core; testing: Testing }> {
  const dist = join(resolve(root), "packages/session-context/dist");
  return {
    core: (await loadCore(dist)) as Core,
    testing: (await import(pathToFileURL(join(dist, "testing/index.js")).href)) as Testing,
  };
}

/** The two sides of a comparison: this checkout and the other. */
export type Side = "this" | "other";

/** One side's round of a compare bench, per turn. */
export interface Round {
  wallMsPerTurn: number;
  cpuMsPerTurn: number;
}

/** This checkout's core and the other one's, each built (`pnpm exec turbo run build`). */
export async function loadCheckouts(otherRoot: string): Promise<Record<Side, Awaited<ReturnType<typeof load>>>> {
  return { this: await load(join(import.meta.dirname, "../../..")), other: await load(otherRoot) };
}
