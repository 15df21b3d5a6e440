import type { ChatMessage } from "../providers/types.js";
import type { PieceEnd } from "./bpe-pieces.js";
import type { ChunkCounts } from "./chunk-counts.js";
import type { PersistedTokenCounts } from "./persisted-token-counts.js";
import type { PieceCounts } from "./piece-counts.js";
import { TextCountMemo } from "./text-count-memo.js";

/**
 * Token counts of model requests, from OpenAI's own BPE vocabularies through
 * `gpt-tokenizer` (a pure-JavaScript tiktoken): exact for OpenAI-style models,
 * an estimate for others (the runtime corrects it with the usage the
 * provider reports). The vocabulary (megabytes) is loaded on the first count
 * that needs it, and counts are cached per text, so a long session pays only
 * for what is new since its last request. A new text is split into the
 * vocabulary's pieces by our own scanner (bpe-pieces.ts: the same pieces as
 * the library's pattern, without running it) and each distinct piece is
 * merged by the library once: texts share most of their words.
 */

/** The BPE vocabularies we count with. */
export type TokenizerName = "o200k_base" | "cl100k_base";

/** Per message: the role and the message framing (OpenAI's chat format); per request: the reply's priming. */
export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_PER_REQUEST = 3;

interface Tokenizer {
  count(text: string): number;
  /** Whether a new piece is merged by the library's BPE directly (false: through its public countTokens). */
  mergesPiecesDirectly: boolean;
}

/** Counts this process knows per vocabulary, whether it counted them or read them from a session's persisted counts. */
const memos = new Map<TokenizerName, TextCountMemo>();
/** The counts of the pieces (words, numbers, runs of symbols or spaces) this process merged, per vocabulary. */
const pieceMemos = new Map<TokenizerName, PieceCounts>();
/** The counts of the space-separated chunks of texts this process counted, per vocabulary. */
const chunkMemos = new Map<TokenizerName, ChunkCounts>();

function memoOf(name: TokenizerName): TextCountMemo {
  let memo = memos.get(name);
  if (!memo) memos.set(name, (memo = new TextCountMemo()));
  return memo;
}

const loaded = new Map<TokenizerName, Promise<Tokenizer>>();
const ready = new Map<TokenizerName, Tokenizer>();

/** The vocabulary a model's tokens are counted with: cl100k for the GPT-4 and 3.5 generation, o200k otherwise. */
export function tokenizerFor(model: string): TokenizerName {
  const name = model.toLowerCase().replace(/^.*\//, "");
  return /^(gpt-4(?!o|\.)|gpt-3\.5|text-embedding)/.test(name) ? "cl100k_base" : "o200k_base";
}

/** Loads a vocabulary (once per process). */
export function loadTokenizer(name: TokenizerName): Promise<Tokenizer> {
  let promise = loaded.get(name);
  if (!promise) {
    promise = importEncoding(name).then(
      ({ encoding, pieceEnd, PieceCounts, ChunkCounts, asciiMergeCount, isAscii }) => {
        const cache = memoOf(name);
        const pieces = new PieceCounts();
        pieceMemos.set(name, pieces);
        const chunks = new ChunkCounts();
        chunkMemos.set(name, chunks);
        const { countPiece, direct } = pieceCounter(encoding, asciiMergeCount, isAscii);
        const countStretch = (text: string, start: number, end: number): number => {
          let tokens = 0;
          while (start < end) {
            const pieceEnds = pieceEnd(text, start);
            tokens += pieces.count(text, start, pieceEnds, countPiece);
            start = pieceEnds;
          }
          return tokens;
        };
        const tokenizer: Tokenizer = {
          mergesPiecesDirectly: direct,
          count(text) {
            let tokens = cache.get(text);
            if (tokens === undefined) {
              tokens = chunks.count(text, countStretch);
              cache.set(text, tokens);
            }
            return tokens;
          },
        };
        ready.set(name, tokenizer);
        return tokenizer;
      },
    );
    loaded.set(name, promise);
  }
  return promise;
}

/**
 * How a new piece is counted: by the library's own step for one piece of its split (a piece that is a token
 * of the vocabulary is one, else its byte-pair merge), which skips its split pattern, the slow part of a
 * first count; an ASCII piece is merged by ascii-merge.ts over the vocabulary's string ranks (the same
 * steps, without turning each pair's bytes back into a string). If a later version moved those internals (a
 * test says so), by its public countTokens of the piece alone, which splits a piece into itself again and
 * so counts it exactly too.
 */
function pieceCounter(
  encoding: Encoding,
  asciiMergeCount: (piece: string, vocabulary: ReadonlyMap<string, number>) => number,
  isAscii: (piece: string) => boolean,
): { countPiece: (piece: string) => number; direct: boolean } {
  const core = (encoding.default as { bytePairEncodingCoreProcessor?: Partial<PieceMerger> } | undefined)
    ?.bytePairEncodingCoreProcessor;
  if (
    typeof core?.getBpeRankFromString === "function" &&
    typeof core.bytePairEncode === "function" &&
    core.bytePairStringRankEncoder instanceof Map
  ) {
    const merger = core as PieceMerger;
    const vocabulary = merger.bytePairStringRankEncoder;
    return {
      countPiece: (piece) =>
        vocabulary.get(piece) !== undefined
          ? 1
          : isAscii(piece)
            ? asciiMergeCount(piece, vocabulary)
            : merger.bytePairEncode(piece).length,
      direct: true,
    };
  }
  // Text that happens to spell a special token (`<|endoftext|>`) is counted as ordinary text.
  const options = { disallowedSpecial: new Set<string>() };
  return { countPiece: (piece) => encoding.countTokens(piece, options), direct: false };
}

/** What gpt-tokenizer 4 does with one piece of its split (`BytePairEncodingCore.countNative`). */
interface PieceMerger {
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
  /** The rank of every token that is valid UTF-8, by its text (what `getBpeRankFromString` looks up). */
  bytePairStringRankEncoder: Map<string, number>;
}

interface Encoding {
  countTokens(text: string, options: { disallowedSpecial: Set<string> }): number;
  default?: unknown;
}

/** The vocabulary, our scanner of its pieces, our merge and the tables of counts: imported with it, so importing the package stays cheap. */
async function importEncoding(name: TokenizerName): Promise<{
  encoding: Encoding;
  pieceEnd: PieceEnd;
  PieceCounts: typeof PieceCounts;
  ChunkCounts: typeof ChunkCounts;
  asciiMergeCount: (piece: string, vocabulary: ReadonlyMap<string, number>) => number;
  isAscii: (piece: string) => boolean;
}> {
  const [encoding, pieces, { PieceCounts }, { ChunkCounts }, { asciiMergeCount, isAscii }] = await Promise.all([
    name === "cl100k_base" ? import("gpt-tokenizer/encoding/cl100k_base") : import("gpt-tokenizer/encoding/o200k_base"),
    import("./bpe-pieces.js"),
    import("./piece-counts.js"),
    import("./chunk-counts.js"),
    import("./ascii-merge.js"),
  ]);
  const pieceEnd = name === "cl100k_base" ? pieces.cl100kPieceEnd : pieces.o200kPieceEnd;
  return { encoding, pieceEnd, PieceCounts, ChunkCounts, asciiMergeCount, isAscii };
}

/** The tokens of a chat request's messages, with OpenAI's per-message framing. */
export async function countChatTokens(messages: readonly ChatMessage[], model: string): Promise<number> {
  const tokenizer = ready.get(tokenizerFor(model)) ?? (await loadTokenizer(tokenizerFor(model)));
  return countWith(tokenizer, messages);
}

/** The same count, synchronously, once the model's vocabulary is loaded (null before). */
export function countChatTokensIfLoaded(messages: readonly ChatMessage[], model: string): number | null {
  const tokenizer = ready.get(tokenizerFor(model));
  return tokenizer ? countWith(tokenizer, messages) : null;
}

/**
 * The same count, taking what a session's earlier processes counted from its
 * persisted counts (opened only when this process has not counted a text
 * itself) and adding what it counts to them: a cold process whose history was
 * counted before loads no vocabulary and runs no BPE.
 */
export async function countChatTokensPersisted(
  messages: readonly ChatMessage[],
  model: string,
  openPersisted: (vocabulary: TokenizerName) => PersistedTokenCounts,
): Promise<number> {
  const name = tokenizerFor(model);
  const memo = memoOf(name);
  let persisted: PersistedTokenCounts | undefined;
  let total = TOKENS_PER_REQUEST;
  for (const message of messages) {
    let tokens = memo.get(message.content);
    if (tokens === undefined) {
      persisted ??= openPersisted(name);
      tokens = persisted.get(message.content);
      if (tokens === undefined) {
        tokens = (ready.get(name) ?? (await loadTokenizer(name))).count(message.content);
        persisted.set(message.content, tokens);
      } else memo.set(message.content, tokens);
    }
    total += TOKENS_PER_MESSAGE + tokens;
  }
  persisted?.flush();
  return total;
}

function countWith(tokenizer: Tokenizer, messages: readonly ChatMessage[]): number {
  let total = TOKENS_PER_REQUEST;
  for (const message of messages) total += TOKENS_PER_MESSAGE + tokenizer.count(message.content);
  return total;
}

/**
 * A bound no BPE count of these messages can exceed (every token is at least
 * one byte of UTF-8), computed without a vocabulary: a request under the
 * budget by this bound needs no counting at all.
 */
export function tokenUpperBound(messages: readonly ChatMessage[]): number {
  let total = TOKENS_PER_REQUEST;
  for (const message of messages) total += TOKENS_PER_MESSAGE + Buffer.byteLength(message.content, "utf8");
  return total;
}

/** Whether a loaded vocabulary merges new pieces through the library's own per-piece step (null: not loaded). */
export function mergesPiecesDirectly(name: TokenizerName): boolean | null {
  return ready.get(name)?.mergesPiecesDirectly ?? null;
}

/** Forgets every count this process knows, as a fresh process starts (tests and benchmarks of the cold path). */
export function forgetTokenCounts(): void {
  for (const memo of memos.values()) memo.clear();
  for (const memo of pieceMemos.values()) memo.clear();
  for (const memo of chunkMemos.values()) memo.clear();
}
