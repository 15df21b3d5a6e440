// Disk trouble (issue 8 section 3): a full disk and a read-only store root give
// the caller a clear error, the turn fails cleanly, and nothing already
// written is damaged. Uses a real tiny tmpfs (and a read-only remount) when
// this process may mount; otherwise a fault-injecting layer over node:fs.
import { execFileSync } from "node:child_process";
import type * as NodeFs from "node:fs";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
// vi.mock below is hoisted above these imports, so the core sees the fault-injecting node:fs.
import { agenticFunction, sessionContext, StoreWriteError } from "../src/index.js";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { removeTree, scriptedRuntime } from "../src/testing/index.js";

const faults = vi.hoisted(() => ({ errno: null as string | null }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  const fail = (): void => {
    if (faults.errno) throw Object.assign(new Error(`${faults.errno}: injected fault`), { code: faults.errno });
  };
  return {
    ...actual,
    writeFileSync: (...args: Parameters<typeof NodeFs.writeFileSync>): void => {
      fail();
      actual.writeFileSync(...args);
    },
    writeSync: (...args: Parameters<typeof NodeFs.writeSync>): number => {
      fail();
      return actual.writeSync(...(args as [number, string]));
    },
    mkdirSync: (...args: Parameters<typeof NodeFs.mkdirSync>): string | undefined => {
      fail();
      return actual.mkdirSync(...args);
    },
    // Opening for writing fails, on this thread or on the pool (createOffThread); opening for reading (and fsync
    // of a directory) still works.
    open: (path: NodeFs.PathLike, ...rest: unknown[]): void => {
      const callback = rest.pop() as (error: NodeJS.ErrnoException | null, fd?: number) => void;
      const flags = rest[0];
      if (faults.errno && typeof flags === "string" && /[wa]/.test(flags)) {
        process.nextTick(callback, Object.assign(new Error(`${faults.errno}: injected fault`), { code: faults.errno }));
        return;
      }
      (actual.open as (...args: unknown[]) => void)(path, ...rest, callback);
    },
    openSync: (path: NodeFs.PathLike, flags: NodeFs.OpenMode = "r", mode?: NodeFs.Mode): number => {
      if (typeof flags === "string" && /[wa]/.test(flags)) fail();
      return actual.openSync(path, flags, mode);
    },
  };
});

let cleanup: Array<() => void> = [];
afterEach(() => {
  faults.errno = null;
  for (const step of cleanup.reverse()) step();
  cleanup = [];
});

/** A fresh tmpfs of `size`, or null when this process may not mount. */
function tryMount(size: string): string | null {
  // OPENPROGRAM_TEST_NO_MOUNT=1 exercises the fault-injecting path on a machine that could mount.
  if (process.env.OPENPROGRAM_TEST_NO_MOUNT) return null;
  const dir = mkdtempSync(join(tmpdir(), "openprogram-disk-"));
  cleanup.push(() => removeTree(dir));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null;
  }
  cleanup.push(() => execFileSync("umount", ["-l", dir], { stdio: "ignore" }));
  return dir;
}

const writeNotes = agenticFunction(
  { name: "write_notes", doc: "Write notes." },
  async ({ notes }: { notes: string }, { runtime }) => {
    await runtime.exec(notes.slice(0, 10));
    return notes;
  },
);

async function firstTurn(db: SessionDB): Promise<string> {
  return sessionContext({ db, sessionId: "disk", runtime: scriptedRuntime(["ok"]).runtime }, async () => {
    await writeNotes({ notes: "first turn, committed" });
    return "disk";
  }).finally(() => db.flushRegistry()); // index.json is a coalesced cache: on disk before the disk goes bad
}

function assertIntact(root: string): void {
  const history = join(root, "disk", "history");
  const files = readdirSync(history);
  expect(files.filter((name) => name.includes(".tmp-"))).toEqual([]);
  const parses = (path: string): boolean => {
    JSON.parse(readFileSync(path, "utf8"));
    return true;
  };
  for (const file of files) expect(parses(join(history, file))).toBe(true);
  expect(parses(join(root, "index.json"))).toBe(true);
  expect(parses(join(root, "disk", "meta.json"))).toBe(true);
}

describe("disk trouble", () => {
  it("a full disk fails the turn with a clear error and damages nothing already written", async () => {
    const mounted = tryMount("3m");
    const root = join(mounted ?? mkdtempSync(join(tmpdir(), "openprogram-disk-inject-")), "sessions");
    if (!mounted) cleanup.push(() => removeTree(join(root, "..")));
    const db = new SessionDB({ root });
    await firstTurn(db);
    const before = await db.loadNodes("disk");

    let filler: string | null = null;
    if (mounted) {
      filler = join(mounted, "filler");
      try {
        writeFileSync(filler, Buffer.alloc(8 * 1024 * 1024));
      } catch {
        // ENOSPC: the disk is now full, which is the point
      }
    } else {
      faults.errno = "ENOSPC";
    }
    const error = await sessionContext({ db, sessionId: "disk", runtime: scriptedRuntime(["ok"]).runtime }, () =>
      writeNotes({ notes: "x".repeat(512 * 1024) }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).code).toBe("store_write_failed");
    expect((error as Error).message).toMatch(/ENOSPC: the disk is full/);

    // Space comes back; the store opens, the first turn is untouched, the session is usable.
    if (filler) rmSync(filler);
    faults.errno = null;
    assertIntact(root);
    const reopened = new SessionDB({ root });
    const after = await reopened.loadNodes("disk");
    expect(after.slice(0, before.length)).toEqual(before);
    expect((await reopened.getSession("disk"))?.status).not.toBe("running");
    await firstTurn(reopened);
    const report = await doctorSessions({ db: new SessionDB({ root }), fix: true });
    expect(report.healthy).toBe(true);
    process.stdout.write(
      `disk-full test used ${mounted ? "a 3 MiB tmpfs" : "the fault-injecting fs layer (mounting not permitted)"}\n`,
    );
  });

  it("a read-only store root is a clear error to the caller, before anything is written", async () => {
    const mounted = tryMount("4m");
    const root = join(mounted ?? mkdtempSync(join(tmpdir(), "openprogram-ro-inject-")), "sessions");
    if (!mounted) cleanup.push(() => removeTree(join(root, "..")));
    await firstTurn(new SessionDB({ root }));
    if (mounted) execFileSync("mount", ["-o", "remount,ro", mounted]);
    else faults.errno = "EROFS";
    const db = new SessionDB({ root });
    // Reading still works.
    expect((await db.listSessions()).map((session) => session.id)).toEqual(["disk"]);
    const error = await sessionContext({ db, sessionId: "disk", runtime: scriptedRuntime(["ok"]).runtime }, () =>
      writeNotes({ notes: "second" }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as Error).message).toMatch(/EROFS: the sessions root is on a read-only file system/);
    const created = await sessionContext({ db, runtime: null }, () => "x").catch((caught: unknown) => caught);
    expect(created).toBeInstanceOf(StoreWriteError);
    if (mounted) execFileSync("mount", ["-o", "remount,rw", mounted]);
    faults.errno = null;
    assertIntact(root);
    expect((await new SessionDB({ root }).loadNodes("disk")).map((node) => node.name)).toEqual([
      "write_notes",
      "scripted",
    ]);
  });
});
