import { describe, expect, it } from "vitest";
import { describeValue } from "../src/entries/messages.js";

class Point {
  constructor(readonly x: number) {}
}

describe("describeValue", () => {
  it("names what a value is, with the value itself where it is short", () => {
    const cases: Array<[unknown, string]> = [
      [null, "null"],
      [undefined, "undefined"],
      [[1, 2], "an array"],
      [{ a: 1 }, "an object"],
      [Object.create(null), "an object"],
      [new Point(1), "a Point object"],
      [new Map(), "a Map object"],
      [new Date(0), "a Date object"],
      [() => 1, "a function"],
      ["chat", 'the string "chat"'],
      [42, "the number 42"],
      [Number.NaN, "the number NaN"],
      [true, "the boolean true"],
      [1n, "a bigint"],
      [Symbol("s"), "a symbol"],
    ];
    for (const [value, expected] of cases) expect(describeValue(value)).toBe(expected);
  });

  it("clips a long string, so a huge value never floods a message", () => {
    const described = describeValue("x".repeat(10_000));
    expect(described).toBe(`the string "${"x".repeat(39)}…"`);
  });
});
