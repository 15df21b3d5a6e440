import fc from "fast-check";
import { countTokens as cl100kCount } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200kCount } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { ChunkCounts } from "../src/compaction/chunk-counts.js";

const asOrdinaryText = { disallowedSpecial: new Set<string>() };

/** Spaces beside everything that may stand before or after one: other whitespace, words, digits, symbols, contractions. */
const ALPHABET = [
  ..."      \t\n\r\u000b\u000c\u00a0\u2003\u3000\ufeff",
  ..."aBzQ'sStlLvVeEdD/.,;:!?-_(){}\"",
  ..."0123456789½٣",
  ..."éÜßǅʰ東京\u0301",
  "😀",
  "\uD800",
  "'s",
  "'ll",
  " tide",
  "Pool",
];
const texts = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 30 }).map((characters) => characters.join(""));

describe.each([
  { name: "o200k_base", count: (text: string) => o200kCount(text, asOrdinaryText) },
  { name: "cl100k_base", count: (text: string) => cl100kCount(text, asOrdinaryText) },
])("space-separated chunks under $name", ({ count }) => {
  it("count alone as they do in their text: the chunks' counts add up to the text's", () => {
    fc.assert(
      fc.property(texts, (text) => {
        const stretches: string[] = [];
        const countStretch = (whole: string, start: number, end: number) => {
          stretches.push(whole.slice(start, end));
          return count(whole.slice(start, end));
        };
        // Remembering nothing (no part is short enough), every chunk is counted alone: they cover the text.
        expect(new ChunkCounts(1 << 16, -1).count(text, countStretch)).toBe(count(text));
        expect(stretches.join("")).toBe(text);
        expect(new ChunkCounts().count(text, countStretch)).toBe(count(text));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("chunk counts", () => {
  const counter = () => {
    const stretches: string[] = [];
    const countStretch = (text: string, start: number, end: number) => {
      stretches.push(text.slice(start, end));
      return o200kCount(text.slice(start, end), asOrdinaryText);
    };
    return { stretches, countStretch };
  };

  it("counts each chunk once, a text's first part apart from the same part after a space", () => {
    const chunks = new ChunkCounts();
    const { stretches, countStretch } = counter();
    expect(chunks.count("the tide pool", countStretch)).toBe(o200kCount("the tide pool"));
    expect(stretches).toEqual(["the", " tide", " pool"]);
    expect(chunks.count("tide pool, the tide", countStretch)).toBe(o200kCount("tide pool, the tide"));
    expect(stretches.slice(3)).toEqual(["tide", " pool,", " the"]);
    // After whitespace a space starts no chunk: the parts are counted together where they stand, every time.
    expect(chunks.count("the  tide\n pool", countStretch)).toBe(o200kCount("the  tide\n pool"));
    expect(chunks.count("the  tide\n pool", countStretch)).toBe(o200kCount("the  tide\n pool"));
    expect(stretches.slice(6)).toEqual(["  tide\n pool", "  tide\n pool"]);
  });

  it("does not remember a long part, and starts over when full", () => {
    const long = "x".repeat(70);
    const chunks = new ChunkCounts(4, 64);
    const { stretches, countStretch } = counter();
    chunks.count(`${long} ${long}`, countStretch);
    chunks.count(`${long} ${long}`, countStretch);
    expect(stretches).toHaveLength(4);
    chunks.count("a b c d", countStretch); // four chunks: full
    chunks.count("e", countStretch); // starts over
    chunks.count("a b", countStretch);
    expect(stretches.slice(4)).toEqual(["a", " b", " c", " d", "e", "a", " b"]);
    chunks.clear();
    chunks.count("e", countStretch);
    expect(stretches.at(-1)).toBe("e");
  });
});
