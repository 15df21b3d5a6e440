import fc from "fast-check";
import cl100k from "gpt-tokenizer/encoding/cl100k_base";
import o200k from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { asciiMergeCount, isAscii } from "../src/compaction/ascii-merge.js";
import { variedHistory } from "../bench/token-history.js";

/** The library's own per-piece step (what token-count.ts merges through when the piece is not ASCII). */
interface Core {
  bytePairStringRankEncoder: Map<string, number>;
  bytePairEncode(piece: string): number[];
}
const coreOf = (encoding: unknown): Core =>
  (encoding as { bytePairEncodingCoreProcessor: Core }).bytePairEncodingCoreProcessor;

const asciiPieces = fc.string({
  unit: fc.integer({ min: 0, max: 0x7f }).map((unit) => String.fromCharCode(unit)),
  minLength: 1,
  maxLength: 40,
});

describe.each([
  { name: "o200k_base", core: coreOf(o200k) },
  { name: "cl100k_base", core: coreOf(cl100k) },
])("the ASCII merge over $name", ({ core }) => {
  const vocabulary = core.bytePairStringRankEncoder;
  const library = (piece: string) => core.bytePairEncode(piece).length;

  it("gives as many tokens as the library's merge for random ASCII pieces (controls, symbols, runs of one letter)", () => {
    fc.assert(
      fc.property(asciiPieces, (piece) => {
        expect(asciiMergeCount(piece, vocabulary)).toBe(library(piece));
      }),
      { numRuns: 3000 },
    );
    for (const piece of [
      "a",
      "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      " \t\n\r",
      "\u0000\u007f",
      "x".repeat(300),
    ])
      expect(asciiMergeCount(piece, vocabulary), JSON.stringify(piece)).toBe(library(piece));
  });

  it("gives as many tokens as the library's merge for the made-up words of the bench, with and without their space", () => {
    const words = new Set(
      variedHistory(3)
        .slice(0, 250)
        .flatMap((message) => message.content.split(/(?= )/)),
    );
    let merged = 0;
    for (const word of words)
      if (vocabulary.get(word) === undefined) {
        merged++;
        expect(asciiMergeCount(word, vocabulary), JSON.stringify(word)).toBe(library(word));
      }
    expect(merged).toBeGreaterThan(500); // most of them are not tokens: the merge ran
  });

  it("merges a piece that is itself a token into one token when the merge reaches it, and tells ASCII apart", () => {
    for (const piece of [" the", "Hello", "ing", " observation"]) {
      expect(vocabulary.get(piece)).toBeDefined();
      expect(asciiMergeCount(piece, vocabulary)).toBe(1);
    }
    expect(isAscii("plain, text\n~")).toBe(true);
    for (const piece of ["café", "東京", "😀", "a\u0080"]) expect(isAscii(piece)).toBe(false);
  });
});
