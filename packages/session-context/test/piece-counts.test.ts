import { describe, expect, it } from "vitest";
import { PieceCounts } from "../src/compaction/piece-counts.js";

describe("piece counts looked up by a stretch of text", () => {
  it("merges each distinct piece once, wherever it stands, and tells apart pieces sharing a slot", () => {
    const merged: string[] = [];
    const countPiece = (piece: string) => (merged.push(piece), piece.length * 10);
    const table = new PieceCounts(16); // 16 slots: the 6 pieces below share some
    const text = "crab|pool|crab|kelp|po|ol|crab|pool|東京|😀|";
    const counts: number[] = [];
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf("|", start);
      counts.push(table.count(text, start, end, countPiece));
      start = end + 1;
    }
    expect(counts).toEqual([40, 40, 40, 40, 20, 20, 40, 40, 20, 20]);
    expect(merged).toEqual(["crab", "pool", "kelp", "po", "ol", "東京", "😀"]);
    // The same stretch in another text is a hit: no merge.
    expect(table.count("a pool", 2, 6, countPiece)).toBe(40);
    expect(merged).toHaveLength(7);
  });

  it("starts over when half full, and counts right after", () => {
    const merged: string[] = [];
    const table = new PieceCounts(8);
    const countPiece = (piece: string) => (merged.push(piece), Number(piece));
    const text = Array.from({ length: 12 }, (_, index) => String(100 + index)).join("");
    const starts = Array.from({ length: 12 }, (_, index) => index * 3);
    // Forwards, then backwards: at most 4 are held at once, so the second pass finds the last 4 of the first.
    for (const start of [...starts, ...starts.reverse()])
      expect(table.count(text, start, start + 3, countPiece)).toBe(Number(text.slice(start, start + 3)));
    expect(merged).toHaveLength(12 + 8);
    expect(merged.slice(12)).toEqual(["107", "106", "105", "104", "103", "102", "101", "100"]);
    table.clear();
    expect(table.count("111", 0, 3, countPiece)).toBe(111);
    expect(merged.at(-1)).toBe("111");
  });
});
