// Node and meta timestamps are the wall clock, as Python's time.time() (a long-lived server's monotonic clock
// falls behind it: it stops while the machine sleeps, and drifts in a virtual machine).
import { afterEach, describe, expect, it, vi } from "vitest";
import { nowSeconds } from "../src/time/now-seconds.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("nowSeconds", () => {
  it("follows the wall clock when the monotonic clock stopped (a machine asleep for an hour)", () => {
    const wall = Date.now();
    const monotonic = performance.now();
    expect(Math.abs(nowSeconds() * 1000 - Date.now())).toBeLessThanOrEqual(3);
    vi.spyOn(Date, "now").mockReturnValue(wall + 3_600_000);
    vi.spyOn(performance, "now").mockReturnValue(monotonic + 5);
    expect(nowSeconds() * 1000).toBeCloseTo(wall + 3_600_000, 0);
  });

  it("keeps microseconds between the wall clock's milliseconds, and never strays more than 2 ms from it", () => {
    const wall = Date.now();
    const monotonic = performance.now();
    const now = vi.spyOn(Date, "now").mockReturnValue(wall);
    const tick = vi.spyOn(performance, "now").mockReturnValue(monotonic);
    const first = nowSeconds();
    tick.mockReturnValue(monotonic + 0.25);
    const second = nowSeconds();
    expect(Math.round((second - first) * 1e6)).toBe(250);
    // The monotonic clock runs 9 s slow against the wall (as a test process here did): each reading is the wall's.
    now.mockReturnValue(wall + 10_000);
    tick.mockReturnValue(monotonic + 1_000);
    expect(nowSeconds() * 1000).toBeCloseTo(wall + 10_000, 0);
    now.mockReturnValue(wall + 10_001);
    tick.mockReturnValue(monotonic + 1_001.5);
    expect(Math.abs(nowSeconds() * 1000 - (wall + 10_001))).toBeLessThanOrEqual(2);
  });
});
