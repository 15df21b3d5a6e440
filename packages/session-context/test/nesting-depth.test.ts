import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../src/index.js";
import { assertNestingDepth, MAX_NESTING_DEPTH } from "../src/entries/host.js";

/** `depth` arrays inside each other, built without recursion. */
function nestedArrays(depth: number): unknown {
  let value: unknown = [];
  for (let level = 1; level < depth; level++) value = [value];
  return value;
}

describe("assertNestingDepth", () => {
  it("accepts 256 levels and refuses 257, of arrays and of objects, naming the input", () => {
    expect(MAX_NESTING_DEPTH).toBe(256);
    expect(() => assertNestingDepth(nestedArrays(256), "run.input")).not.toThrow();
    expect(() => assertNestingDepth(nestedArrays(257), "run.input")).toThrow(
      new InvalidInputError(
        "run.input nests arrays and objects more than 256 levels deep; inputs may nest at most 256 levels. Flatten it.",
      ),
    );
    let objects: Record<string, unknown> = {};
    for (let level = 1; level < 257; level++) objects = { a: 1, inner: objects };
    expect(() => assertNestingDepth({ wrapper: objects }, "--input")).toThrow(/--input nests .* more than 256/);
  });

  it("walks 400,000 levels without touching the stack, and a wide shallow value whole", () => {
    expect(() => assertNestingDepth(JSON.parse(`${"[".repeat(400_000)}${"]".repeat(400_000)}`), "x")).toThrow(
      InvalidInputError,
    );
    const wide = { items: Array.from({ length: 100_000 }, (_, index) => ({ index, tags: ["a", "b"] })) };
    expect(() => assertNestingDepth(wide, "x")).not.toThrow();
    expect(() => assertNestingDepth([1, [2, [3, nestedArrays(300)]]], "x", 1000)).not.toThrow();
  });

  it("does not follow a reference back to an ancestor (the caller names cycles)", () => {
    const cycle: Record<string, unknown> = { name: "loop" };
    cycle.self = { again: cycle };
    expect(() => assertNestingDepth(cycle, "x")).not.toThrow();
  });
});
