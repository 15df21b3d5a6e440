// The process-wide memo of token counts keeps no long text alive, and at most MAX_KEPT_CHARS of short ones.
import { expect, it } from "vitest";
import { LONGEST_KEPT_TEXT, MAX_KEPT_CHARS, TextCountMemo } from "../src/compaction/text-count-memo.js";

it("remembers a long text by its digest: an equal copy finds its count, the text itself is not kept", () => {
  const memo = new TextCountMemo();
  const long = "word ".repeat(LONGEST_KEPT_TEXT);
  memo.set(long, 1234);
  expect(memo.charactersKept).toBe(0);
  expect(memo.get(`${"word ".repeat(LONGEST_KEPT_TEXT - 1)}word `)).toBe(1234);
  expect(memo.get(`${long}!`)).toBeUndefined();
});

it("keeps short texts themselves, and starts over past MAX_KEPT_CHARS of them", () => {
  const memo = new TextCountMemo();
  const text = (index: number): string => `${index}`.padEnd(LONGEST_KEPT_TEXT, "x");
  const fit = Math.floor(MAX_KEPT_CHARS / LONGEST_KEPT_TEXT);
  for (let index = 0; index < fit; index++) memo.set(text(index), index);
  expect(memo.get(text(0))).toBe(0);
  expect(memo.charactersKept).toBe(fit * LONGEST_KEPT_TEXT);
  memo.set(text(fit), fit);
  expect(memo.get(text(0))).toBeUndefined();
  expect(memo.get(text(fit))).toBe(fit);
  expect(memo.charactersKept).toBe(LONGEST_KEPT_TEXT);
});
