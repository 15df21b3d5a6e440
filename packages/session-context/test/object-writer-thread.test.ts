// A commit's loose objects are written on a thread of their own (src/store/git/object-writer-thread.ts): what it
// writes must be exactly what git writes and reads back (ids, content, modes, fan-out folders made when missing,
// no temp file left), and a failure must reach the commit as the file system's error.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashObject, writeLooseObjects } from "../src/store/git/loose-objects.js";
import { writeObjectsOffThread } from "../src/store/git/object-writer-thread.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "openprogram-objects-"));
  execFileSync("git", ["init", "--quiet", dir]);
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const gitIn = (...args: string[]): string => execFileSync("git", ["-C", dir, ...args], { encoding: "utf8" });

describe("the loose-object writer thread", () => {
  it("writes objects git reads back byte for byte, making the fan-out folders it is told are missing", async () => {
    const contents = ["first ünï\n", "second\n", "", "x".repeat(100_000)].map((text) => Buffer.from(text, "utf8"));
    const objects = contents.map((content) => ({ id: hashObject("blob", content), type: "blob" as const, content }));

    await writeObjectsOffThread(
      join(dir, ".git"),
      objects.map((object) => ({ ...object, makeFolder: true })),
    );

    for (const [index, object] of objects.entries()) {
      expect(gitIn("cat-file", "-t", object.id).trim()).toBe("blob");
      expect(execFileSync("git", ["-C", dir, "cat-file", "blob", object.id])).toEqual(contents[index]);
      const file = join(dir, ".git", "objects", object.id.slice(0, 2), object.id.slice(2));
      expect(statSync(file).mode & 0o777).toBe(0o400);
    }
    for (const object of objects) {
      const names = readdirSync(join(dir, ".git", "objects", object.id.slice(0, 2)));
      expect(names.filter((name) => name.startsWith("tmp_obj_"))).toEqual([]);
    }
    expect(() => gitIn("fsck", "--strict")).not.toThrow();
  });

  it("makes a fan-out folder again when one it knew of is gone (git gc removes emptied ones)", async () => {
    const content = Buffer.from("again\n");
    const object = { id: hashObject("blob", content), type: "blob" as const, content };

    await writeObjectsOffThread(join(dir, ".git"), [{ ...object, makeFolder: false }]);

    expect(gitIn("cat-file", "-p", object.id)).toBe("again\n");
  });

  it("fails the write with the file system's error code, and forgets the folders it was to make", async () => {
    const content = Buffer.from("refused\n");
    const object = { id: hashObject("blob", content), type: "blob" as const, content };
    // A repository whose objects/ is a file: no folder can be made in it (as root too).
    const broken = join(dir, "broken");
    mkdirSync(broken);
    writeFileSync(join(broken, "objects"), "not a folder");
    const folders = new Set<string>();

    const failures: unknown[] = [];
    // Enough commits for the writer to be past its first ones (written on this thread) and on its own thread.
    for (let commit = 0; commit < 10; commit++)
      failures.push(await writeLooseObjects(broken, [object], folders).catch((caught: unknown) => caught));

    for (const error of failures) {
      expect(error).toBeInstanceOf(Error);
      expect((error as NodeJS.ErrnoException).code).toBe("ENOTDIR");
    }
    expect(folders.size).toBe(0);
  });
});
