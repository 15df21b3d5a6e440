import { constants, deflateRawSync, deflateSync } from "node:zlib";

/**
 * Deflating a big tree again at every commit, reusing the compressed front it had last time.
 *
 * Why: a session's `history/` is one git tree, written anew at every commit, and it only grows at its end (node
 * files are named by seq) or changes there (this turn's nodes). Deflated whole at level 1 it cost 1.1 ms at 1,000
 * entries and 3.8 ms at 4,000: the largest item of a long session's commit. Stored uncompressed it would cost
 * 0.04 ms but take 1.5x the bytes on disk at every commit. Here the content is cut at fixed offsets into chunks,
 * each deflated on its own up to a byte-aligned sync flush, so the chunks a tree shares with one written recently
 * are copied as they were and only the rest is deflated. The result is one ordinary zlib stream (header, the
 * chunks' blocks, an empty final block, the Adler-32 of the whole), which git and every zlib reader inflate.
 */

/** Bytes per chunk: small enough that a commit deflates little, large enough that each compresses well alone. */
export const CHUNK_BYTES = 8192;
/** Content shorter than this is deflated whole (nothing worth reusing). */
const CHUNKED_FROM = 2 * CHUNK_BYTES;
/**
 * How many big trees' chunks are kept (a process committing in many long sessions at once); each holds its tree's
 * bytes and their compressed form, about 1.7 times the tree.
 */
const REMEMBERED = 16;
const LEVEL = 1;
/** CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (fastest, no dictionary): a multiple of 31, as RFC 1950 asks. */
const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
/** A final fixed-Huffman block holding nothing but its end: closes the chunks' non-final blocks. */
const FINAL_EMPTY_BLOCK = Buffer.from([0x03, 0x00]);
const ADLER_BASE = 65521;
/** Bytes summed before the sums are reduced (zlib's bound; a JavaScript number would allow more). */
const ADLER_RUN = 5552;

interface Chunk {
  input: Buffer;
  /** Raw deflate blocks of `input`, ending byte-aligned and not final. */
  output: Buffer;
  /** The Adler-32 sums over the content up to and including this chunk. */
  a: number;
  b: number;
}

/** The chunks of recently deflated big contents, most recent last. */
const remembered: Chunk[][] = [];

/** zlib-format deflate of `content`, reusing the compressed chunks it shares with a recent big content. */
export function deflateReusing(bytes: Uint8Array): Buffer {
  if (bytes.length < CHUNKED_FROM) return deflateSync(bytes, { level: LEVEL });
  const content = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const previous = longestShared(content);
  const chunks: Chunk[] = [];
  let a = 1;
  let b = 0;
  // Reused only while every chunk before it was: its sums carry the whole front's.
  let reusing = previous !== null;
  for (let offset = 0, index = 0; offset < content.length; offset += CHUNK_BYTES, index++) {
    const input = content.subarray(offset, Math.min(offset + CHUNK_BYTES, content.length));
    const known = reusing ? previous?.[index] : undefined;
    if (known?.input.equals(input)) {
      chunks.push(known);
      ({ a, b } = known);
      continue;
    }
    reusing = false;
    ({ a, b } = adlerOver(input, a, b));
    const output = deflateRawSync(input, { level: LEVEL, finishFlush: constants.Z_SYNC_FLUSH });
    chunks.push({ input: Buffer.from(input), output, a, b });
  }
  remember(previous, chunks);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0);
  return Buffer.concat([ZLIB_HEADER, ...chunks.map((chunk) => chunk.output), FINAL_EMPTY_BLOCK, adler]);
}

/** The remembered chunks whose first chunk is `content`'s (a tree only grows at its end), or null. */
function longestShared(content: Buffer): Chunk[] | null {
  const first = content.subarray(0, CHUNK_BYTES);
  for (let index = remembered.length - 1; index >= 0; index--) {
    const chunks = remembered[index] as Chunk[];
    if (chunks[0]?.input.equals(first)) return chunks;
  }
  return null;
}

function remember(previous: Chunk[] | null, chunks: Chunk[]): void {
  const at = previous ? remembered.indexOf(previous) : -1;
  if (at >= 0) remembered.splice(at, 1);
  remembered.push(chunks);
  if (remembered.length > REMEMBERED) remembered.shift();
}

/** Adler-32's two sums carried over `bytes` (RFC 1950). */
function adlerOver(bytes: Buffer, a: number, b: number): { a: number; b: number } {
  for (let offset = 0; offset < bytes.length; ) {
    const end = Math.min(offset + ADLER_RUN, bytes.length);
    for (; offset < end; offset++) {
      a += bytes[offset] as number;
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return { a, b };
}

/** Forgets every remembered chunk (tests). */
export function forgetDeflatedChunks(): void {
  remembered.length = 0;
}
