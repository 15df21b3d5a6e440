import { createHash } from "node:crypto";

/** Texts whose counts are remembered; beyond this the memo starts over. */
export const MAX_CACHED_TEXTS = 50_000;
/** A text longer than this is remembered by its SHA-256 digest, not by itself. */
export const LONGEST_KEPT_TEXT = 1024;
/** Characters of the texts kept as keys; beyond this the memo starts over. */
export const MAX_KEPT_CHARS = 16 * 1024 * 1024;

/**
 * Token counts this process knows, by text. The memo outlives every session,
 * so it must not keep their texts alive: a long text (a 10 MB reply) is
 * remembered by its digest, and the short texts it keeps hold at most
 * MAX_KEPT_CHARS characters. Hashing a long text costs far less than counting
 * it again.
 */
export class TextCountMemo {
  private readonly byText = new Map<string, number>();
  private readonly byDigest = new Map<string, number>();
  private keptChars = 0;

  get(text: string): number | undefined {
    return text.length > LONGEST_KEPT_TEXT ? this.byDigest.get(digestOf(text)) : this.byText.get(text);
  }

  set(text: string, tokens: number): void {
    const long = text.length > LONGEST_KEPT_TEXT;
    if (this.size >= MAX_CACHED_TEXTS || (!long && this.keptChars + text.length > MAX_KEPT_CHARS)) this.clear();
    if (long) {
      this.byDigest.set(digestOf(text), tokens);
    } else if (!this.byText.has(text)) {
      this.byText.set(text, tokens);
      this.keptChars += text.length;
    }
  }

  /** Texts remembered. */
  get size(): number {
    return this.byText.size + this.byDigest.size;
  }

  /** Characters of the texts kept as keys (for tests). */
  get charactersKept(): number {
    return this.keptChars;
  }

  clear(): void {
    this.byText.clear();
    this.byDigest.clear();
    this.keptChars = 0;
  }
}

function digestOf(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}
