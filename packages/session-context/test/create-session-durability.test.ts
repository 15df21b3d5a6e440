// What a created session's durability rests on, in order: meta.json's data and the new folder's names flushed
// before the folder is renamed into place, and the root flushed after the rename and before createSession
// resolves, for sessions created at once as well. The file system is the real one; a wrapper
// records each fsync(2) (by path) and each rename as they begin and end.
import type * as Fs from "node:fs";
import type * as FsPromises from "node:fs/promises";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

interface Event {
  what: "fsync" | "rename";
  phase: "begin" | "end";
  path: string;
  /** For a rename: where to. */
  to?: string;
}

const record = vi.hoisted(() => ({ events: [] as Event[], paths: new Map<number, string>() }));

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof Fs>();
  const openSync = ((path: Fs.PathLike, ...rest: unknown[]) => {
    const descriptor = (actual.openSync as (...args: unknown[]) => number)(path, ...rest);
    record.paths.set(descriptor, String(path));
    return descriptor;
  }) as typeof Fs.openSync;
  const fsync = (descriptor: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
    const path = record.paths.get(descriptor) ?? `fd ${descriptor}`;
    record.events.push({ what: "fsync", phase: "begin", path });
    actual.fsync(descriptor, (error) => {
      record.events.push({ what: "fsync", phase: "end", path });
      callback(error);
    });
  };
  return { ...actual, openSync, fsync };
});

vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const rename = async (from: Fs.PathLike, to: Fs.PathLike): Promise<void> => {
    record.events.push({ what: "rename", phase: "begin", path: String(from), to: String(to) });
    await actual.rename(from, to);
    record.events.push({ what: "rename", phase: "end", path: String(from), to: String(to) });
  };
  return { ...actual, rename, default: { ...actual, rename } };
});

const { createTempStore } = await import("../src/testing/index.js");

describe("creating a session", () => {
  let store: ReturnType<typeof createTempStore>;
  beforeEach(() => {
    store = createTempStore("openprogram-create-durability-");
    record.events.length = 0;
  });
  afterEach(() => store.cleanup());

  /** Checks one session's order of events; `resolvedAt` is the number of events recorded when createSession resolved. */
  function assertDurableOrder(sessionId: string, resolvedAt: number): void {
    const events = record.events.slice(0, resolvedAt);
    const at = (match: (event: Event) => boolean): number => events.findIndex(match);
    const renameBegan = at(
      (event) => event.what === "rename" && event.phase === "begin" && event.to === join(store.root, sessionId),
    );
    const renameEnded = at(
      (event) => event.what === "rename" && event.phase === "end" && event.to === join(store.root, sessionId),
    );
    expect(renameBegan, `${sessionId} was renamed into place`).toBeGreaterThanOrEqual(0);
    const building = (events[renameBegan] as Event).path;
    expect(basename(building)).toMatch(new RegExp(`^\\.creating-${sessionId}-`));
    const flushed = (path: string): number =>
      at((event) => event.what === "fsync" && event.phase === "end" && event.path === path);
    expect(flushed(join(building, "meta.json")), "meta.json flushed before the rename").toBeGreaterThanOrEqual(0);
    expect(flushed(join(building, "meta.json"))).toBeLessThan(renameBegan);
    expect(flushed(building), "the new folder's names flushed before the rename").toBeGreaterThanOrEqual(0);
    expect(flushed(building)).toBeLessThan(renameBegan);
    // Some fsync of the root began after the rename ended and ended before createSession resolved.
    const covered = events.some(
      (event, index) =>
        event.what === "fsync" &&
        event.phase === "begin" &&
        event.path === store.root &&
        index > renameEnded &&
        events
          .slice(index)
          .some((later) => later.what === "fsync" && later.phase === "end" && later.path === store.root),
    );
    expect(covered, `${sessionId}: the root flushed after its rename, before createSession resolved`).toBe(true);
  }

  it("flushes meta.json and the folder before renaming it into place, and the root before resolving", async () => {
    await store.db.createSession({ id: "one" });
    assertDurableOrder("one", record.events.length);
    expect(existsSync(join(store.root, "one", "workdir", ".gitkeep"))).toBe(true);
    expect((await store.db.readMeta("one")).id).toBe("one");
  });

  it("flushes the root after each rename for sessions created at once, before each createSession resolves", async () => {
    const ids = Array.from({ length: 20 }, (_, index) => `many_${index}`);
    const resolvedAt = new Map<string, number>();
    await Promise.all(
      ids.map(async (id) => {
        await store.db.createSession({ id });
        resolvedAt.set(id, record.events.length);
      }),
    );
    for (const id of ids) assertDurableOrder(id, resolvedAt.get(id) as number);
    expect((await store.db.listSessions()).map((session) => session.id).sort()).toEqual([...ids].sort());
  });
});
