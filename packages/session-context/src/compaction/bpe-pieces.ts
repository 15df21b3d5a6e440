/**
 * The pre-tokenizer of OpenAI's BPE vocabularies, by hand. A BPE count first
 * splits a text into "pieces" with the vocabulary's split pattern (a regular
 * expression over Unicode classes), then merges the bytes of each piece. On a
 * long history the pattern is most of the cost (the pieces repeat, so their
 * counts are cached) and it allocates a match per piece; these scanners find
 * where each piece ends by walking the same character classes, giving exactly
 * the pieces `gpt-tokenizer`'s patterns give (`O200K_TOKEN_SPLIT_REGEX`,
 * `CL100K_TOKEN_SPLIT_REGEX`; test/bpe-pieces.test.ts checks the splits and the
 * counts against them, including random texts over every class involved).
 *
 * Each alternative of a pattern is emulated in its order, with the outcome of
 * the regular expression's backtracking worked out per alternative.
 */

/** Where the piece that starts at `start` (less than the text's length) ends. */
export type PieceEnd = (text: string, start: number) => number;

/** Character classes of the patterns, as bits. */
const LETTER = 1; // \p{L}
const UPPERISH = 2; // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const LOWERISH = 4; // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const NUMBER = 8; // \p{N}
const SPACE = 16; // \s
const NEWLINE = 32; // [\r\n]
const KNOWN = 128;

const CR = 0x0d;
const LF = 0x0a;
const APOSTROPHE = 0x27;
const SPACE_BAR = 0x20;
const SLASH = 0x2f;

/** Classes of the Basic Multilingual Plane, worked out on first sight (0: not yet); others in a map. */
let basicPlane: Uint8Array | undefined;
const astral = new Map<number, number>();

/** The classes of one code point, from the same Unicode tables the patterns use (the engine's). */
export function classify(codePoint: number): number {
  const character = String.fromCodePoint(codePoint);
  let classes = KNOWN;
  if (/\p{L}/u.test(character)) classes |= LETTER;
  if (/[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]/u.test(character)) classes |= UPPERISH;
  if (/[\p{Ll}\p{Lm}\p{Lo}\p{M}]/u.test(character)) classes |= LOWERISH;
  if (/\p{N}/u.test(character)) classes |= NUMBER;
  if (/\s/u.test(character)) classes |= SPACE;
  if (codePoint === CR || codePoint === LF) classes |= NEWLINE;
  return classes;
}

function classesOf(codePoint: number): number {
  if (codePoint < 0x80) return ASCII_CLASSES[codePoint] as number;
  if (codePoint < 0x10000) {
    const table = (basicPlane ??= new Uint8Array(0x10000));
    let classes = table[codePoint] as number;
    if (classes === 0) table[codePoint] = classes = classify(codePoint);
    return classes;
  }
  let classes = astral.get(codePoint);
  if (classes === undefined) astral.set(codePoint, (classes = classify(codePoint)));
  return classes;
}

/**
 * The classes of ASCII, written out so that most texts are split without compiling the Unicode classes
 * (test/bpe-pieces.test.ts checks them against `classify`, which asks the engine).
 */
export const ASCII_CLASSES = asciiClasses();

function asciiClasses(): Uint8Array {
  const table = new Uint8Array(0x80).fill(KNOWN);
  for (let unit = 0x41; unit <= 0x5a; unit++) table[unit] = KNOWN | LETTER | UPPERISH;
  for (let unit = 0x61; unit <= 0x7a; unit++) table[unit] = KNOWN | LETTER | LOWERISH;
  for (let unit = 0x30; unit <= 0x39; unit++) table[unit] = KNOWN | NUMBER;
  for (const unit of [0x09, 0x0b, 0x0c, SPACE_BAR]) table[unit] = KNOWN | SPACE;
  table[CR] = table[LF] = KNOWN | SPACE | NEWLINE;
  return table;
}

/** Whether a UTF-16 unit is \s (every \s character is a single unit). */
export function isWhitespace(unit: number): boolean {
  return (classesOf(unit) & SPACE) !== 0;
}

/** The code point at `index` as the patterns see it (`u` flag: a lone surrogate is a code point of its own). */
function codePointAt(text: string, index: number): number {
  const unit = text.charCodeAt(index);
  if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
    const next = text.charCodeAt(index + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return (unit - 0xd800) * 0x400 + (next - 0xdc00) + 0x10000;
  }
  return unit;
}

const widthOf = (codePoint: number): number => (codePoint > 0xffff ? 2 : 1);

/** [^\s\p{L}\p{N}]: punctuation, symbols, marks and the rest. */
const isOther = (classes: number): boolean => (classes & (SPACE | LETTER | NUMBER)) === 0;

/** [^\r\n\p{L}\p{N}]: what may stand before a word. */
const isPrefix = (classes: number): boolean => (classes & (NEWLINE | LETTER | NUMBER)) === 0;

/** `'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])` at `index`: where it ends, or `index`. */
function contractionEnd(text: string, index: number): number {
  if (text.charCodeAt(index) !== APOSTROPHE) return index;
  const first = text.charCodeAt(index + 1) | 0x20; // ASCII lower case (NaN past the end becomes 0x20)
  if (first === 0x73 || first === 0x64 || first === 0x6d || first === 0x74) return index + 2; // s d m t
  const second = text.charCodeAt(index + 2) | 0x20;
  if ((first === 0x6c && second === 0x6c) || ((first === 0x76 || first === 0x72) && second === 0x65)) return index + 3; // ll ve re
  return index;
}

/** The end of the run from `index` of code points having any of `classes`. */
function runEnd(text: string, index: number, classes: number): number {
  const length = text.length;
  while (index < length) {
    const codePoint = codePointAt(text, index);
    if ((classesOf(codePoint) & classes) === 0) break;
    index += widthOf(codePoint);
  }
  return index;
}

/** The end of the whitespace run from `start`, and where its last \r or \n is (-1: none). */
function whitespaceRun(text: string, start: number): { end: number; lastNewline: number } {
  const length = text.length;
  let index = start;
  let lastNewline = -1;
  while (index < length) {
    const unit = text.charCodeAt(index); // every \s character is a single UTF-16 unit
    if ((classesOf(unit) & SPACE) === 0) break;
    if (unit === CR || unit === LF) lastNewline = index;
    index++;
  }
  return { end: index, lastNewline };
}

/**
 * `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?` from `index`, or -1.
 * When the lower-case run cannot start where the greedy upper-case run stops, the expression gives
 * back characters from its end until one of them can start it: the last of the run that is both.
 */
function casedWordEnd(text: string, index: number): number {
  const length = text.length;
  let lastBothEnd = -1;
  while (index < length) {
    const codePoint = codePointAt(text, index);
    const classes = classesOf(codePoint);
    if ((classes & UPPERISH) === 0) break;
    index += widthOf(codePoint);
    if (classes & LOWERISH) lastBothEnd = index;
  }
  if (index < length && classesOf(codePointAt(text, index)) & LOWERISH)
    return contractionEnd(text, runEnd(text, index, LOWERISH));
  return lastBothEnd < 0 ? -1 : contractionEnd(text, lastBothEnd);
}

/** `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(contraction)?` from `index`, or -1. */
function capitalisedWordEnd(text: string, index: number): number {
  const upper = runEnd(text, index, UPPERISH);
  return upper === index ? -1 : contractionEnd(text, runEnd(text, upper, LOWERISH));
}

/**
 * o200k_base (GPT-4o and later):
 * `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(contraction)?`
 * `|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(contraction)?`
 * `|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
 */
export const o200kPieceEnd: PieceEnd = (text, start) => {
  const first = codePointAt(text, start);
  const classes = classesOf(first);
  const afterFirst = start + widthOf(first);
  if (classes & (LETTER | UPPERISH | LOWERISH) || isPrefix(classes)) {
    const prefixed = isPrefix(classes);
    let end = prefixed ? casedWordEnd(text, afterFirst) : -1;
    if (end < 0) end = casedWordEnd(text, start);
    if (end < 0 && prefixed) end = capitalisedWordEnd(text, afterFirst);
    if (end < 0) end = capitalisedWordEnd(text, start);
    if (end >= 0) return end;
  }
  if (classes & NUMBER) return numberEnd(text, afterFirst);
  const symbols = symbolsPieceEnd(text, start, afterFirst, true);
  return symbols >= 0 ? symbols : whitespacePieceEnd(text, start, true);
};

/** `\p{N}{1,3}`: the end of up to two more digits after the first (which ends at `index`). */
function numberEnd(text: string, index: number): number {
  for (let digits = 1; digits < 3 && index < text.length; digits++) {
    const next = codePointAt(text, index);
    if ((classesOf(next) & NUMBER) === 0) break;
    index += widthOf(next);
  }
  return index;
}

/**
 * ` ?[^\s\p{L}\p{N}]+` and the line breaks after it (`[\r\n/]*` for o200k, `[\r\n]*` for cl100k), or -1.
 * The optional space is tried first; without it the piece would start with that space, which is whitespace.
 */
function symbolsPieceEnd(text: string, start: number, afterFirst: number, slash: boolean): number {
  const symbolsStart = text.charCodeAt(start) === SPACE_BAR ? afterFirst : start;
  if (symbolsStart >= text.length || !isOther(classesOf(codePointAt(text, symbolsStart)))) return -1;
  let end = otherRunEnd(text, symbolsStart);
  while (end < text.length) {
    const unit = text.charCodeAt(end);
    if (unit !== CR && unit !== LF && !(slash && unit === SLASH)) break;
    end++;
  }
  return end;
}

/** The end of the run from `index` of [^\s\p{L}\p{N}]. */
function otherRunEnd(text: string, index: number): number {
  const length = text.length;
  while (index < length) {
    const codePoint = codePointAt(text, index);
    if (!isOther(classesOf(codePoint))) break;
    index += widthOf(codePoint);
  }
  return index;
}

/**
 * The whitespace alternatives. o200k: `\s*[\r\n]+|\s+(?!\S)|\s+`; cl100k (as gpt-tokenizer writes it):
 * `\s+$|\s*[\r\n]|\s+(?!\S)|\s`. `\s*[\r\n]` gives back whitespace to its last line break; `\s+(?!\S)`
 * keeps the last whitespace character for the word after it.
 */
function whitespacePieceEnd(text: string, start: number, o200k: boolean): number {
  const { end, lastNewline } = whitespaceRun(text, start);
  if (end === text.length && (!o200k || lastNewline < 0)) return end;
  if (lastNewline >= 0) return lastNewline + 1;
  if (end - start >= 2) return end - 1;
  return o200k ? end : start + 1;
}

/**
 * cl100k_base (GPT-4, GPT-3.5), as gpt-tokenizer writes it:
 * `(contraction)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`
 */
export const cl100kPieceEnd: PieceEnd = (text, start) => {
  const first = codePointAt(text, start);
  if (first === APOSTROPHE) {
    const end = contractionEnd(text, start);
    if (end > start) return end;
  }
  const classes = classesOf(first);
  const afterFirst = start + widthOf(first);
  if (isPrefix(classes) && afterFirst < text.length && classesOf(codePointAt(text, afterFirst)) & LETTER)
    return runEnd(text, afterFirst, LETTER);
  if (classes & LETTER) return runEnd(text, afterFirst, LETTER);
  if (classes & NUMBER) return numberEnd(text, afterFirst);
  const symbols = symbolsPieceEnd(text, start, afterFirst, false);
  return symbols >= 0 ? symbols : whitespacePieceEnd(text, start, false);
};
