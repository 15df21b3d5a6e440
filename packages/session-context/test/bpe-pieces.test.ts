import fc from "fast-check";
import { countTokens as cl100kCount } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200kCount } from "gpt-tokenizer/encoding/o200k_base";
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/encodingParams/constants";
import { describe, expect, it } from "vitest";
import {
  ASCII_CLASSES,
  cl100kPieceEnd,
  classify,
  isWhitespace,
  o200kPieceEnd,
  type PieceEnd,
} from "../src/compaction/bpe-pieces.js";
import {
  countChatTokens,
  forgetTokenCounts,
  loadTokenizer,
  mergesPiecesDirectly,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REQUEST,
} from "../src/compaction/token-count.js";

/** Prose, code, JSON, CJK, emoji, whitespace runs, and the corners of the split patterns. */
const CORPUS = [
  "Hello, world! It's a test. We'll see; they've gone, I'm here, you'd know, THEY'RE LOUD, SHE'LL GO.",
  "The quick brown fox jumps over the lazy dog.\n\nA second paragraph — with an em dash, “curly quotes” and…",
  "function double(x: number): number {\n\treturn x * 2; // twice\n}\n\n\n    const y = [1, 2, 3];\r\n",
  "def f(a, b=None):\n    if a and not b:\n        return {'k': [a] * 3}\n    raise ValueError(f\"bad {a!r}\")\n",
  JSON.stringify({ a: 1, b: [true, null, "x y"], nested: { "key with space": 3.14159, path: "/usr/bin" } }, null, 2),
  "東京は日本の首都です。漢字、ひらがな、カタカナ。한국어 텍스트입니다. 中文标点：“引号”。",
  "emoji 😀👍🏽 family 👨‍👩‍👧‍👦 flags 🇫🇷🇯🇵 ✨ keycap 1️⃣ and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters 𝟙𝟚𝟛",
  "a   b\t\t c \n\n\n d  \n  e     ",
  "   leading and trailing   ",
  "\n\n\n",
  "   ",
  " ",
  "\r\n\r\n  \r\n",
  "x\u00A0y\u2003z\u3000w\u2028v\u2029u\uFEFFt\u1680s",
  "naïve café Ünïcödé résumé Straße ÀÉÎÕÜ ǅungla ǈ Ǆ titlecase ʰʲ modifier",
  "Ελληνικά кириллица עברית العربية हिन्दी ไทย",
  "<|endoftext|> special <|im_start|>user<|im_sep|> text <|fim_prefix|>",
  "12345678901234567890 3.14159 1e10 0x1F -42 ½ ⅓ Ⅻ ①②③ ٣٤٥",
  "e\u0301 combining a\u0300\u0301\u0302 marks \u0301alone \u0301\u0301 A\u0301B\u0301c",
  "URLs https://example.com/path?q=1&r=2#frag and /usr/local/bin/ //// ;\n/\n/x",
  "mixedCASEWords camelCase PascalCase snake_case SCREAMING_CASE iOS macOS HTTPServer",
  "'s 'S 'll 'LL 've 'Re 'd 'm 't 'x 'sun ''s A's 東's 東'S ʰ's",
  "tabs\t\t\tand\u000bvertical\u000cfeed",
  "lone \uD800 high \uDC00 low surrogates \uD83D",
  "",
];

/** Characters of every class the patterns tell apart (and their boundaries). */
const ALPHABET = [
  ..." \t\n\r\u000b\u000c\u00a0\u2003\u3000\u2028\ufeff",
  ..."aBzQ'sStlLvVeErRdDmM/.,;:!?-_()[]{}\"\\#@",
  ..."0123456789½Ⅻ①٣",
  ..."éÜßǅǈʰʲ東京한ไ",
  "\u0301",
  "\u0903",
  "\u20dd",
  "😀",
  "𝔘",
  "𝟙",
  "\uD800",
  "\uDC00",
  "👍🏽",
];

const texts = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 24 }).map((characters) => characters.join(""));

function piecesOf(text: string, pieceEnd: PieceEnd): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; ) {
    const end = pieceEnd(text, start);
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

const patternPieces = (text: string, pattern: RegExp): string[] => [...text.matchAll(pattern)].map((match) => match[0]);

const vocabularies = [
  { name: "o200k_base", pieceEnd: o200kPieceEnd, pattern: O200K_TOKEN_SPLIT_REGEX, model: "gpt-4o", count: o200kCount },
  {
    name: "cl100k_base",
    pieceEnd: cl100kPieceEnd,
    pattern: CL100K_TOKEN_SPLIT_REGEX,
    model: "gpt-4",
    count: cl100kCount,
  },
] as const;

const asOrdinaryText = { disallowedSpecial: new Set<string>() };

describe("character classes", () => {
  it("of ASCII, written out, are those the engine's Unicode tables give", () => {
    for (let unit = 0; unit < 0x80; unit++) expect(ASCII_CLASSES[unit], `U+${unit.toString(16)}`).toBe(classify(unit));
  });

  it("tell whitespace (\\s, ASCII or not) from the rest", () => {
    for (const character of " \t\n\r\u000b\u000c\u00a0\u1680\u2003\u2028\u3000\ufeff")
      expect(isWhitespace(character.charCodeAt(0)), JSON.stringify(character)).toBe(true);
    for (const character of "a.0_\u0085\u200b東é")
      expect(isWhitespace(character.charCodeAt(0)), JSON.stringify(character)).toBe(false);
  });
});

describe.each(vocabularies)("$name pieces", ({ name, pieceEnd, pattern, model, count }) => {
  it("merges a new piece through gpt-tokenizer's own per-piece step (its internals: an upgrade that moved them fails here)", async () => {
    await loadTokenizer(name);
    expect(mergesPiecesDirectly(name)).toBe(true);
  });

  it("splits the corpus exactly as the vocabulary's pattern does", () => {
    for (const text of CORPUS)
      expect(piecesOf(text, pieceEnd), JSON.stringify(text)).toEqual(patternPieces(text, pattern));
  });

  it("splits random texts over every character class exactly as the pattern does", () => {
    fc.assert(
      fc.property(texts, (text) => {
        expect(piecesOf(text, pieceEnd)).toEqual(patternPieces(text, pattern));
      }),
      { numRuns: 3000 },
    );
  });

  it("counts every text of the corpus as gpt-tokenizer's countTokens does", async () => {
    forgetTokenCounts();
    for (const text of CORPUS) {
      const counted = await countChatTokens([{ role: "user", content: text }], model);
      expect(counted - TOKENS_PER_REQUEST - TOKENS_PER_MESSAGE, JSON.stringify(text)).toBe(count(text, asOrdinaryText));
    }
    // A long mixed history at once, its texts new to the cache.
    forgetTokenCounts();
    const history = CORPUS.map((text, index) => ({
      role: "user" as const,
      content: `${index}: ${text} ${CORPUS.join(" ")}`,
    }));
    const expected = history.reduce(
      (sum, message) => sum + TOKENS_PER_MESSAGE + count(message.content, asOrdinaryText),
      0,
    );
    expect(await countChatTokens(history, model)).toBe(TOKENS_PER_REQUEST + expected);
  });

  it("counts random texts as gpt-tokenizer's countTokens does", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(texts, { minLength: 1, maxLength: 4 }), async (parts) => {
        const text = parts.join(" ");
        const counted = await countChatTokens([{ role: "user", content: text }], model);
        expect(counted - TOKENS_PER_REQUEST - TOKENS_PER_MESSAGE).toBe(count(text, asOrdinaryText));
      }),
      { numRuns: 1000 },
    );
  });
});
