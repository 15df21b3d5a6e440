// A turn's commit takes the ref's lock while the index is renamed, and creates the pack's two temp files while it
// creates its index lock (each a wait on the thread pool: see createOffThread). The order git needs still holds when a step fails: the
// ref never moves before the index, no lock or temp file is left behind, and the next turn commits everything.
import type * as NodeFs from "node:fs";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { assertHealthy, plainGit } from "./helpers.js";

const faults = vi.hoisted(() => ({ failRenameTo: null as string | null, failCreateOf: null as string | null }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    rename: (from: NodeFs.PathLike, to: NodeFs.PathLike, callback: (error: NodeJS.ErrnoException | null) => void) => {
      if (faults.failRenameTo !== null && String(to).endsWith(faults.failRenameTo)) {
        process.nextTick(callback, Object.assign(new Error("EIO: injected"), { code: "EIO" }));
        return;
      }
      actual.rename(from, to, callback);
    },
    open: (path: NodeFs.PathLike, ...rest: unknown[]): void => {
      const callback = rest.pop() as (error: NodeJS.ErrnoException | null, fd?: number) => void;
      if (faults.failCreateOf !== null && String(path).includes(faults.failCreateOf)) {
        process.nextTick(callback, Object.assign(new Error("ENOSPC: injected"), { code: "ENOSPC" }));
        return;
      }
      (actual.open as (...args: unknown[]) => void)(path, ...rest, callback);
    },
  };
});

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-commit-overlap-");
});
afterEach(() => {
  faults.failRenameTo = null;
  faults.failCreateOf = null;
  store.cleanup();
});

async function turn(turnId: string, output: string): Promise<string | null> {
  await store.db.beginTurn("s", turnId);
  await store.db.appendNode("s", { role: "user", output }, { atHead: true });
  return store.db.endTurn("s", turnId, { status: "idle" });
}

function leftovers(dir: string): string[] {
  const pack = join(dir, ".git", "objects", "pack");
  return [
    ...readdirSync(pack).filter((name) => name.startsWith("tmp_")),
    ...["index.lock", join("refs", "heads", "main.lock")].filter((name) => existsSync(join(dir, ".git", name))),
  ];
}

describe("a turn's commit whose steps overlap", () => {
  it("leaves the ref where it was when the index's rename fails, and the next turn commits both", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    const first = await turn("t1", "first");
    faults.failRenameTo = join(".git", "index");

    await expect(turn("t2", "second")).rejects.toThrow(/EIO: injected/);

    faults.failRenameTo = null;
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(first);
    expect(leftovers(dir)).toEqual([]);
    const third = await turn("t3", "third");
    expect(third).not.toBe(first);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn t3\nturn t1\nsession init");
    assertHealthy(dir);
  });

  it("leaves no temp pack file when one of the two cannot be created", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    const first = await turn("t1", "first");
    faults.failCreateOf = "tmp_idx_";

    await expect(turn("t2", "second")).rejects.toThrow(/ENOSPC: injected/);

    faults.failCreateOf = null;
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(first);
    expect(leftovers(dir)).toEqual([]);
    await turn("t3", "third");
    expect(plainGit(dir, "show", "--format=", "--stat", "HEAD")).toContain("history/");
    assertHealthy(dir);
  });

  it("removes the temp pack files it made ahead when there is nothing new to pack", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    const first = await turn("t1", "first");

    expect(await store.db.commitTurn("s", "nothing new")).toBeNull();

    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(first);
    expect(leftovers(dir)).toEqual([]);
    assertHealthy(dir);
  });

  it("removes them too when the index lock cannot be taken, and commits on the next turn", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    const first = await turn("t1", "first");
    faults.failCreateOf = "index.lock";

    await expect(turn("t2", "second")).rejects.toThrow(/ENOSPC: injected/);

    faults.failCreateOf = null;
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(first);
    expect(leftovers(dir)).toEqual([]);
    await turn("t3", "third");
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn t3\nturn t1\nsession init");
    assertHealthy(dir);
  });
});
