import { isWhitespace } from "./bpe-pieces.js";

/**
 * The token counts of a text's space-separated chunks, remembered by the chunk. A new process counts its
 * first long history before the JIT has compiled our piece scanner, so walking every character in
 * JavaScript costs several times what it will later; `split(" ")` and Map lookups are the engine's own
 * compiled code from the start. Most chunks (` tide`, ` 12,`) recur, and only a new one is scanned.
 *
 * Why a chunk counts alone as it does in its text: a space that follows a character other than whitespace
 * always starts a piece of both vocabularies' patterns (no piece holds such a character and then a space:
 * a word, number or run of symbols holds no space after its first character, and a run of whitespace holds
 * nothing else), the patterns look only forward, and what a chunk's last piece sees after it (a space or
 * the text's end) ends it as the chunk's end does. So the chunks are cut there (and at the text's ends),
 * and a chunk of one part of the split is counted once per process: keyed by the part, its space implied.
 * Where the character before a space is whitespace (a double space, a line break and an indent) the parts
 * are one chunk, counted where it stands.
 */
export class ChunkCounts {
  /** Counts of ` ` + part, for parts after a space. */
  private readonly afterSpace = new Map<string, number>();
  /** Counts of a text's first part alone. */
  private readonly first = new Map<string, number>();

  /** `capacity`: the most chunks remembered (then it starts over); a part longer than `longest` is not remembered. */
  constructor(
    private readonly capacity = 1 << 16,
    private readonly longest = 64,
  ) {}

  /** The count of `text`, counting a stretch of it not remembered with `countStretch` (which finds its pieces in `text`). */
  count(text: string, countStretch: (text: string, start: number, end: number) => number): number {
    const parts = text.split(" ");
    let tokens = 0;
    let chunkStart = 0;
    let onePart = true;
    let start = 0;
    for (let index = 0; index < parts.length; index++) {
      const part = parts[index] as string;
      const end = start + part.length;
      const closes = index === parts.length - 1 || (part.length > 0 && !isWhitespace(part.charCodeAt(part.length - 1)));
      if (closes) {
        if (onePart && part.length <= this.longest) {
          const memo = index === 0 ? this.first : this.afterSpace;
          let counted = memo.get(part);
          if (counted === undefined) {
            counted = countStretch(text, chunkStart, end);
            if (this.afterSpace.size + this.first.size >= this.capacity) this.clear();
            memo.set(part, counted);
          }
          tokens += counted;
        } else tokens += countStretch(text, chunkStart, end);
        chunkStart = end;
        onePart = true;
      } else onePart = false;
      start = end + 1;
    }
    return tokens;
  }

  clear(): void {
    this.afterSpace.clear();
    this.first.clear();
  }
}
