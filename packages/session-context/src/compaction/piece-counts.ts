/**
 * The token counts of the BPE pieces a process has merged, looked up by a
 * stretch of a text rather than by a string: a long history has a hundred
 * thousand pieces, nearly all seen before, and cutting each out of its text to
 * look it up in a Map (a new string, hashed again, soon garbage) cost more
 * than finding where it ends. An open-addressing table of FNV-1a hashes; a hit
 * compares the stored piece with the stretch character by character.
 */
export class PieceCounts {
  private pieces: Array<string | undefined>;
  private hashes: Int32Array;
  private counts: Int32Array;
  private mask: number;
  private size = 0;

  /** `capacity` (a power of two) is the most the table holds; past half of it, it starts over. */
  constructor(private readonly capacity = 1 << 17) {
    this.pieces = new Array<string | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.counts = new Int32Array(capacity);
    this.mask = capacity - 1;
  }

  /** The count of `text.slice(start, end)`, merging it with `countPiece` the first time it is seen. */
  count(text: string, start: number, end: number, countPiece: (piece: string) => number): number {
    let hash = 0x811c9dc5 | 0;
    for (let index = start; index < end; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
    const length = end - start;
    let slot = hash & this.mask;
    for (let stored = this.pieces[slot]; stored !== undefined; stored = this.pieces[slot]) {
      if (this.hashes[slot] === hash && stored.length === length && sameStretch(stored, text, start))
        return this.counts[slot] as number;
      slot = (slot + 1) & this.mask;
    }
    const piece = text.slice(start, end);
    const tokens = countPiece(piece);
    if (this.size >= this.capacity >>> 1) {
      this.clear();
      slot = hash & this.mask;
    }
    this.pieces[slot] = piece;
    this.hashes[slot] = hash;
    this.counts[slot] = tokens;
    this.size++;
    return tokens;
  }

  clear(): void {
    if (this.size === 0) return;
    this.pieces.fill(undefined);
    this.size = 0;
  }
}

function sameStretch(piece: string, text: string, start: number): boolean {
  for (let index = 0; index < piece.length; index++)
    if (piece.charCodeAt(index) !== text.charCodeAt(start + index)) return false;
  return true;
}
