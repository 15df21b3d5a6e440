// randomHex hands out bytes of a pooled CSPRNG draw: every name it mints has the asked length in lowercase hex, no
// byte is handed out twice (names stay distinct across the pool's refills), and lengths past the pool still work.
import { describe, expect, it } from "vitest";
import { mintNodeId, mintTurnId, randomHex } from "../src/ids.js";

describe("randomHex", () => {
  it("mints distinct names of the asked length across many refills of its pool", () => {
    // 20,000 node ids take 120,000 bytes: about thirty refills of a 4 KiB pool.
    const ids = Array.from({ length: 20_000 }, () => mintNodeId());
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("gives odd lengths, lengths longer than its pool, and the minted id shapes", () => {
    for (const length of [1, 5, 8, 17]) expect(randomHex(length)).toMatch(new RegExp(`^[0-9a-f]{${length}}$`));
    const long = randomHex(10_000);
    expect(long).toMatch(/^[0-9a-f]{10000}$/);
    expect(new Set(long).size, "all sixteen digits turn up").toBe(16);
    expect(mintTurnId()).toMatch(/^turn_[0-9a-f]{10}$/);
  });

  it("hands out different bytes to consecutive calls (no byte reused)", () => {
    // 64-bit names: two equal in a row would mean the pool handed out the same bytes again.
    const names = Array.from({ length: 2_000 }, () => randomHex(16));
    for (let index = 1; index < names.length; index++) expect(names[index]).not.toBe(names[index - 1]);
    expect(new Set(names).size).toBe(names.length);
  });
});
