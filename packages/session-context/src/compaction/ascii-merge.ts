/**
 * The byte-pair merge of a piece of ASCII text, counted. gpt-tokenizer merges a piece's UTF-8 bytes and
 * looks up every candidate pair by turning its bytes back into a string (a check that they are valid
 * UTF-8, then a TextDecoder call); in ASCII every byte is a character, so the pair is a stretch of the piece
 * itself and is looked up in the vocabulary's string ranks directly. The steps are the library's (and
 * tiktoken's): merge the pair of lowest rank, the leftmost of equals, until no pair is in the vocabulary;
 * the parts left are the tokens. test/ascii-merge.test.ts checks it against the library's own merge.
 */

const NOT_A_TOKEN = Number.POSITIVE_INFINITY;

/** Where each part starts and the rank of each part with the next, reused across pieces (grown when needed). */
let starts = new Int32Array(64);
let ranks = new Float64Array(64);

/** Whether every character of `piece` is ASCII. */
export function isAscii(piece: string): boolean {
  for (let index = 0; index < piece.length; index++) if (piece.charCodeAt(index) >= 0x80) return false;
  return true;
}

/** How many tokens the merge of `piece` (ASCII, at least one character) gives; `vocabulary`: the rank of each token. */
export function asciiMergeCount(piece: string, vocabulary: ReadonlyMap<string, number>): number {
  const length = piece.length;
  if (starts.length <= length) {
    starts = new Int32Array(length * 2);
    ranks = new Float64Array(length * 2);
  }
  // Parts 0..parts-1; part i is piece[starts[i], starts[i + 1]); ranks[i] is that of parts i and i+1 joined.
  let parts = length;
  for (let index = 0; index <= length; index++) starts[index] = index;
  for (let index = 0; index < length - 1; index++)
    ranks[index] = vocabulary.get(piece.slice(index, index + 2)) ?? NOT_A_TOKEN;
  ranks[length - 1] = NOT_A_TOKEN;
  while (parts > 1) {
    let lowest = NOT_A_TOKEN;
    let at = -1;
    for (let index = 0; index < parts - 1; index++) {
      const rank = ranks[index] as number;
      if (rank < lowest) {
        lowest = rank;
        at = index;
      }
    }
    if (at < 0) break;
    // Part at+1 joins part at: drop its start and its pair's rank, then rank the new neighbours.
    starts.copyWithin(at + 1, at + 2, parts + 1);
    ranks.copyWithin(at, at + 1, parts);
    parts--;
    ranks[at] = at + 1 < parts ? pairRank(piece, at, vocabulary) : NOT_A_TOKEN;
    if (at > 0) ranks[at - 1] = pairRank(piece, at - 1, vocabulary);
  }
  return parts;
}

/** The rank of parts `index` and `index + 1` joined. */
function pairRank(piece: string, index: number, vocabulary: ReadonlyMap<string, number>): number {
  return vocabulary.get(piece.slice(starts[index], starts[index + 2])) ?? NOT_A_TOKEN;
}
