// A turn's commit takes the ref's lock while the index is renamed, creates the pack's two temp files while it
// creates its index lock, and renames the pack and its index at once (each a wait on the thread pool: see
// createOffThread). The order git needs still holds when a step fails: the ref never moves before the index, nor the
// index before the pack's two files, no lock or temp file is left behind, and the next turn commits everything.
import type * as NodeFs from "node:fs";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { assertHealthy, plainGit } from "./helpers.js";

const faults = vi.hoisted(() => ({
  failRenameTo: null as string | null,
  failCreateOf: null as string | null,
  /** Holds a pack's rename until its index's has begun (or 5 s passed), to see whether the two overlap. */
  holdPackRename: false,
  /** Renames begun and ended, in order: "begin .pack", "end .idx", ... */
  renames: [] as string[],
}));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    rename: (from: NodeFs.PathLike, to: NodeFs.PathLike, callback: (error: NodeJS.ErrnoException | null) => void) => {
      const kind = /\.(pack|idx)$/.exec(String(to))?.[0] ?? null;
      if (kind) faults.renames.push(`begin ${kind}`);
      const done = (error: NodeJS.ErrnoException | null): void => {
        if (kind) faults.renames.push(`end ${kind}`);
        callback(error);
      };
      if (faults.failRenameTo !== null && String(to).endsWith(faults.failRenameTo)) {
        process.nextTick(done, Object.assign(new Error("EIO: injected"), { code: "EIO" }));
        return;
      }
      if (faults.holdPackRename && kind === ".pack") {
        const started = Date.now();
        const wait = (): void => {
          if (faults.renames.includes("begin .idx") || Date.now() - started > 5_000) actual.rename(from, to, done);
          else setTimeout(wait, 5);
        };
        wait();
        return;
      }
      actual.rename(from, to, done);
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
  faults.holdPackRename = false;
  faults.renames = [];
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

  it("renames the pack and its index at once, and git reads the commit", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    faults.holdPackRename = true;
    faults.renames = [];

    const sha = await turn("t1", "first");

    // The index's rename began while the pack's was held: one round trip, not two in a row.
    expect(faults.renames.slice(0, 2).sort()).toEqual(["begin .idx", "begin .pack"]);
    expect(faults.renames.indexOf("begin .idx")).toBeLessThan(faults.renames.indexOf("end .pack"));
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(sha);
    expect(plainGit(dir, "show", "--format=%s", "--stat", "HEAD")).toContain("turn t1");
    assertHealthy(dir);
  });

  for (const failing of [".idx", ".pack"]) {
    it(`leaves the ref and the index where they were when the pack's ${failing} cannot be renamed`, async () => {
      await store.db.createSession({ id: "s" });
      const dir = join(store.root, "s");
      const first = await turn("t1", "first");
      const indexBefore = plainGit(dir, "ls-files", "--stage");
      faults.failRenameTo = failing;

      await expect(turn("t2", "second")).rejects.toThrow(/EIO: injected/);

      faults.failRenameTo = null;
      expect(plainGit(dir, "rev-parse", "HEAD")).toBe(first);
      expect(plainGit(dir, "ls-files", "--stage")).toBe(indexBefore);
      // No temp file stays; the half that was renamed may, alone, as a kill between the two would leave it.
      expect(leftovers(dir)).toEqual([]);
      const third = await turn("t3", "third");
      expect(third).not.toBe(first);
      expect(plainGit(dir, "log", "--format=%s")).toBe("turn t3\nturn t1\nsession init");
      expect(
        plainGit(dir, "show", "HEAD:history", "--name-only")
          .split("\n")
          .filter((n) => n.endsWith(".json")),
      ).toHaveLength(3);
      assertHealthy(dir);
    });
  }

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
