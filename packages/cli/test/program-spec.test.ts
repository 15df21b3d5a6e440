import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree } from "@openprogram/session-context/testing";
import { afterAll, describe, expect, it } from "vitest";
import { parseProgramSpec } from "../src/program-spec.js";

const dir = mkdtempSync(join(tmpdir(), "openprogram-spec-"));
afterAll(() => removeTree(dir));
mkdirSync(join(dir, "odd#dir"));
mkdirSync(join(dir, "folder.js"));
for (const file of ["a.mjs", "b.ts", "odd#dir/c.js", "d.txt"]) writeFileSync(join(dir, file), "");

describe("parseProgramSpec", () => {
  it("splits module#export and resolves the path against the working directory", () => {
    expect(parseProgramSpec("a.mjs#summarize", dir)).toEqual({
      raw: "a.mjs#summarize",
      modulePath: join(dir, "a.mjs"),
      exportName: "summarize",
      kind: "javascript",
    });
    expect(parseProgramSpec(join(dir, "b.ts"), "/")).toEqual({
      raw: join(dir, "b.ts"),
      modulePath: join(dir, "b.ts"),
      kind: "typescript",
    });
  });

  it("keeps a '#' that belongs to a directory name", () => {
    expect(parseProgramSpec("odd#dir/c.js", dir)).toMatchObject({
      modulePath: join(dir, "odd#dir", "c.js"),
      kind: "javascript",
    });
    expect(parseProgramSpec("odd#dir/c.js#run", dir)).toMatchObject({
      modulePath: join(dir, "odd#dir", "c.js"),
      exportName: "run",
    });
  });

  it.each([
    ["", /The program is missing/],
    ["#summarize", /names no module before '#'/],
    ["a.mjs#bad-name", /"bad-name" \(after '#' in "a\.mjs#bad-name"\) is not an export name/],
    ["missing.mjs", /^Module not found: .*missing\.mjs \(from "missing\.mjs"\)\.$/],
    ["folder.js", /folder\.js is not a file/],
    ["d.txt", /unsupported extension "\.txt"/],
  ])("rejects %j with InvalidInputError", (raw, message) => {
    let caught: unknown;
    try {
      parseProgramSpec(raw, dir);
    } catch (error) {
      caught = error;
    }
    expect((caught as { code?: string }).code).toBe("invalid_input");
    expect((caught as Error).message).toMatch(message);
  });
});
