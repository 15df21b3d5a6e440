// countUse (store/use-count.ts): the counter behind a lease's pins, a turn's keep and a session's files not in place.
import { describe, expect, it } from "vitest";
import { countUse } from "../src/store/use-count.js";

describe("countUse", () => {
  it("keeps the key while any use is counted, ends each use once, and tells when none is left", () => {
    const uses = new Map<string, number>();
    let nonesLeft = 0;
    const first = countUse(uses, "k", () => nonesLeft++);
    const second = countUse(uses, "k", () => nonesLeft++);
    expect(uses.get("k")).toBe(2);
    first();
    first();
    expect(uses.get("k")).toBe(1);
    expect(nonesLeft).toBe(0);
    second();
    expect(uses.has("k")).toBe(false);
    expect(nonesLeft).toBe(1);
    second();
    expect(nonesLeft).toBe(1);
    expect(uses.size).toBe(0);
  });
});
