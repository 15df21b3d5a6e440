import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputTooLargeError, InvalidInputError } from "../src/index.js";
import {
  DEFAULT_MAX_INPUT_BYTES,
  readAnswersFile,
  readTextFileCapped,
  unserialisableResult,
} from "../src/entries/host.js";

const dir = mkdtempSync(join(tmpdir(), "openprogram-read-capped-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("readTextFileCapped", () => {
  it("reads a file up to the limit exactly", () => {
    const path = join(dir, "exact.txt");
    writeFileSync(path, "é".repeat(50));
    expect(readTextFileCapped(path, { maxBytes: 100, label: "the file" })).toBe("é".repeat(50));
  });

  it("stops at the limit on /dev/zero and says which input and which limit", () => {
    const before = process.memoryUsage().rss;
    const error = (() => {
      try {
        readTextFileCapped("/dev/zero", { maxBytes: 1024 * 1024, label: "--input-file /dev/zero", limitHint: "X=1" });
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(InputTooLargeError);
    expect((error as InputTooLargeError).code).toBe("input_too_large");
    expect((error as Error).message).toBe(
      "--input-file /dev/zero is larger than 1 MiB, the most that is read (X=1); pass a smaller file.",
    );
    // Read 1 MiB and stopped: nowhere near the file's (endless) size.
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("names a file it cannot read", () => {
    expect(() => readTextFileCapped(join(dir, "absent"), { maxBytes: 10, label: "the absent file" })).toThrow(
      new InvalidInputError("Cannot read the absent file: ENOENT."),
    );
  });
});

describe("readAnswersFile", () => {
  it("refuses an answers file over its limit (default DEFAULT_MAX_INPUT_BYTES), naming it", () => {
    const path = join(dir, "answers.txt");
    writeFileSync(path, "yes\nno\n");
    expect(readAnswersFile(path)).toEqual(["yes", "no"]);
    expect(() => readAnswersFile(path, { maxBytes: 4, limitHint: "OPENPROGRAM_MAX_INPUT_BYTES=4" })).toThrow(
      `the answers file ${path} is larger than 4 bytes, the most that is read (OPENPROGRAM_MAX_INPUT_BYTES=4)`,
    );
    expect(() => readAnswersFile("/dev/zero")).toThrow(
      `the answers file /dev/zero is larger than ${DEFAULT_MAX_INPUT_BYTES / 1024 / 1024} MiB`,
    );
  });
});

describe("unserialisableResult", () => {
  it("stands in for a result JSON.stringify refuses, with the reason", () => {
    let deep: unknown = "leaf";
    for (let level = 0; level < 20_000; level++) deep = { a: deep };
    const error = (() => {
      try {
        JSON.stringify(deep);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(unserialisableResult(error).unserialisable).toMatch(
      /^The result could not be represented as JSON \(Maximum call stack size exceeded\)/,
    );
  });
});
