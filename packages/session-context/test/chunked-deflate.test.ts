// A big tree is deflated in chunks, the front it shares with a recent tree copied as it was compressed then
// (src/store/git/chunked-deflate.ts): every result must be one zlib stream any reader inflates to the content
// (inflateSync checks the Adler-32 too), reusing what it can and compressing about as well as deflating it whole.
import { randomBytes } from "node:crypto";
import { deflateSync, inflateSync } from "node:zlib";
import { beforeEach, describe, expect, it } from "vitest";
import { CHUNK_BYTES, deflateReusing, forgetDeflatedChunks } from "../src/store/git/chunked-deflate.js";

/** The bytes of a git tree of `count` node files: mode, name, NUL, a 20-byte id each. */
function treeOf(count: number, idOf: (index: number) => Buffer = () => randomBytes(20)): Buffer {
  const entries: Buffer[] = [];
  for (let index = 0; index < count; index++) {
    const name = `${String(index).padStart(4, "0")}-${index % 2 ? "l" : "c"}-${randomBytes(6).toString("hex")}.json`;
    entries.push(Buffer.from(`100644 ${name}\0`), idOf(index));
  }
  return Buffer.concat(entries);
}

/** The compressed bytes two results share from their start. */
function sharedFront(one: Buffer, other: Buffer): number {
  let at = 0;
  while (at < one.length && at < other.length && one[at] === other[at]) at++;
  return at;
}

beforeEach(() => forgetDeflatedChunks());

describe("deflateReusing", () => {
  it("deflates small content whole, as deflateSync at level 1", () => {
    const small = treeOf(20);
    expect(small.length).toBeLessThan(2 * CHUNK_BYTES);
    expect(deflateReusing(small).equals(deflateSync(small, { level: 1 }))).toBe(true);
  });

  it("inflates to the content at every size around the chunk boundaries", () => {
    for (const length of [
      2 * CHUNK_BYTES,
      2 * CHUNK_BYTES + 1,
      3 * CHUNK_BYTES - 1,
      3 * CHUNK_BYTES,
      5 * CHUNK_BYTES + 77,
    ]) {
      const content = randomBytes(length);
      expect(inflateSync(deflateReusing(content)).equals(content), `${length} bytes`).toBe(true);
    }
  });

  it("reuses the compressed front of the tree a commit wrote before, and still inflates to the new tree", () => {
    const first = treeOf(600);
    const firstOut = deflateReusing(first);
    expect(inflateSync(firstOut).equals(first)).toBe(true);
    // The next commit's tree: four new node files at the end, and the last node's id changed (its update).
    const grown = Buffer.concat([first.subarray(0, first.length - 20), randomBytes(20), treeOf(4)]);
    const grownOut = deflateReusing(grown);
    expect(inflateSync(grownOut).equals(grown)).toBe(true);
    const unchangedChunks = Math.floor((first.length - 20) / CHUNK_BYTES);
    expect(unchangedChunks).toBeGreaterThanOrEqual(3);
    // Header plus the unchanged chunks' blocks, byte for byte as compressed the first time.
    expect(sharedFront(firstOut, grownOut)).toBeGreaterThan(unchangedChunks * CHUNK_BYTES * 0.5);
    // About as small as deflating the whole tree at once.
    expect(grownOut.length).toBeLessThan(deflateSync(grown, { level: 1 }).length * 1.05);
  });

  it("reuses nothing once the front changed, and never a chunk past a changed one", () => {
    const first = treeOf(600);
    deflateReusing(first);
    const frontChanged = Buffer.from(first);
    frontChanged[10] = (frontChanged[10] as number) ^ 0xff;
    expect(inflateSync(deflateReusing(frontChanged)).equals(frontChanged)).toBe(true);
    // A change in the second chunk only: the first is reused, the third (same bytes) is deflated again, so that the
    // checksum carried through the chunks stays the whole content's.
    const middleChanged = Buffer.from(first);
    middleChanged[CHUNK_BYTES + 5] = (middleChanged[CHUNK_BYTES + 5] as number) ^ 0xff;
    expect(inflateSync(deflateReusing(middleChanged)).equals(middleChanged)).toBe(true);
  });

  it("keeps the trees of several sessions apart", () => {
    const trees = Array.from({ length: 5 }, () => treeOf(500));
    for (const tree of trees) deflateReusing(tree);
    for (const tree of trees) {
      const grown = Buffer.concat([tree, treeOf(3)]);
      expect(inflateSync(deflateReusing(grown)).equals(grown)).toBe(true);
    }
  });
});
