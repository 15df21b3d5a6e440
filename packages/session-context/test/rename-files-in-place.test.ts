// A grouped write (a node with the meta.json that names it, a reply with its first tool's node) creates the temp
// files no spare stands in for at once, one wait on the thread pool for all of them, and still renames them in the
// order given. A temp file that cannot be created fails the write naming its file, and leaves nothing behind.
import type * as NodeFs from "node:fs";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { StoreWriteError } from "../src/index.js";
import { renameFilesInPlace } from "../src/store/atomic-file.js";

const seen = vi.hoisted(() => ({
  /** Creations of temp files and renames, begun and ended, in order. */
  events: [] as string[],
  /** Hold each temp file's creation until this many have begun (or 5 s passed). */
  holdCreationsUntil: 0,
  /** Creating a temp file beside a file whose name contains this fails with ENOSPC. */
  failCreationOf: null as string | null,
}));

vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  const fileName = (path: NodeFs.PathLike): string => String(path).split("/").pop() ?? "";
  return {
    ...actual,
    open: (path: NodeFs.PathLike, ...rest: unknown[]): void => {
      const callback = rest.pop() as (error: NodeJS.ErrnoException | null, fd?: number) => void;
      const name = fileName(path);
      if (!name.includes(".tmp-")) return void (actual.open as (...args: unknown[]) => void)(path, ...rest, callback);
      seen.events.push(`begin create ${name.split(".tmp-")[0]}`);
      const done = (error: NodeJS.ErrnoException | null, fd?: number): void => {
        seen.events.push(`end create ${name.split(".tmp-")[0]}`);
        callback(error, fd);
      };
      if (seen.failCreationOf !== null && name.includes(seen.failCreationOf)) {
        process.nextTick(done, Object.assign(new Error("ENOSPC: injected"), { code: "ENOSPC" }));
        return;
      }
      const started = Date.now();
      const go = (): void => {
        const begun = seen.events.filter((event) => event.startsWith("begin create")).length;
        if (begun >= seen.holdCreationsUntil || Date.now() - started > 5_000)
          (actual.open as (...args: unknown[]) => void)(path, ...rest, done);
        else setTimeout(go, 5);
      };
      go();
    },
    rename: (from: NodeFs.PathLike, to: NodeFs.PathLike, callback: (error: NodeJS.ErrnoException | null) => void) => {
      seen.events.push(`rename ${fileName(to)}`);
      actual.rename(from, to, callback);
    },
  };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "openprogram-rename-in-place-"));
});
afterEach(() => {
  seen.events = [];
  seen.holdCreationsUntil = 0;
  seen.failCreationOf = null;
  rmSync(dir, { recursive: true, force: true });
});

describe("renameFilesInPlace", () => {
  it("creates a grouped write's temp files at once and renames them in the order given", async () => {
    seen.holdCreationsUntil = 2;
    const node = join(dir, "0001-u-abc.json");
    const meta = join(dir, "meta.json");
    writeFileSync(meta, '{"head_id": null}');

    await renameFilesInPlace(
      [
        { path: node, data: '{"id": "abc"}' },
        { path: meta, data: '{"head_id": "abc"}' },
      ],
      false,
    );

    // The second creation began before the first ended: one round trip, not two in a row.
    expect(seen.events.slice(0, 2)).toEqual(["begin create .0001-u-abc.json", "begin create .meta.json"]);
    expect(seen.events.filter((event) => event.startsWith("rename"))).toEqual([
      "rename 0001-u-abc.json",
      "rename meta.json",
    ]);
    expect(readFileSync(node, "utf8")).toBe('{"id": "abc"}');
    expect(readFileSync(meta, "utf8")).toBe('{"head_id": "abc"}');
    expect(readdirSync(dir).sort()).toEqual(["0001-u-abc.json", "meta.json"]);
  });

  it("fails naming the file whose temp file could not be created, and leaves every file as it was", async () => {
    seen.failCreationOf = "meta.json";
    const node = join(dir, "0001-u-abc.json");
    const meta = join(dir, "meta.json");
    writeFileSync(meta, '{"head_id": null}');

    const write = renameFilesInPlace(
      [
        { path: node, data: '{"id": "abc"}' },
        { path: meta, data: '{"head_id": "abc"}' },
      ],
      false,
    );

    await expect(write).rejects.toBeInstanceOf(StoreWriteError);
    await expect(write).rejects.toMatchObject({ path: meta });
    await expect(write).rejects.toThrow(/ENOSPC/);
    expect(seen.events.filter((event) => event.startsWith("rename"))).toEqual([]);
    // The node's temp file, created beside the failing one, is removed; meta.json keeps its text.
    expect(readdirSync(dir)).toEqual(["meta.json"]);
    expect(readFileSync(meta, "utf8")).toBe('{"head_id": null}');
  });

  it("takes a spare where one is ready and creates only the others", async () => {
    const spare = join(dir, "spare-1");
    writeFileSync(spare, "");
    const { openSync } = await vi.importActual<typeof NodeFs>("node:fs");
    const spares = [{ path: spare, fd: openSync(spare, "r+") }];

    await renameFilesInPlace(
      [
        { path: join(dir, "a.json"), data: "A" },
        { path: join(dir, "b.json"), data: "B" },
      ],
      false,
      () => spares.shift() ?? null,
    );

    expect(seen.events.filter((event) => event.startsWith("begin create"))).toEqual(["begin create .b.json"]);
    expect(readFileSync(join(dir, "a.json"), "utf8")).toBe("A");
    expect(readFileSync(join(dir, "b.json"), "utf8")).toBe("B");
    expect(readdirSync(dir).sort()).toEqual(["a.json", "b.json"]);
  });
});
