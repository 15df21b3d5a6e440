/**
 * Where the wall clock was at a reading of the monotonic one: nowSeconds counts from it, for Python's
 * microseconds (Date.now() has milliseconds only).
 */
let anchor = { wallMs: Date.now(), monotonicMs: performance.now() };

/** Further than this from Date.now(), the count is anchored to the wall clock again. */
const MAX_DRIFT_MS = 2;

/**
 * Unix seconds with microsecond resolution, like Python's time.time(): the wall clock. The monotonic clock
 * alone (performance.timeOrigin + performance.now()) falls behind it in a long-lived process: it stops while
 * the machine sleeps and drifts in a virtual machine (a test process here ran 9 s behind after five minutes), so
 * each reading is checked against Date.now() and the count anchored again when it strays.
 */
export function nowSeconds(): number {
  const wallMs = Date.now();
  const monotonicMs = performance.now();
  let ms = anchor.wallMs + (monotonicMs - anchor.monotonicMs);
  if (Math.abs(ms - wallMs) > MAX_DRIFT_MS) {
    anchor = { wallMs, monotonicMs };
    ms = wallMs;
  }
  return Math.round(ms * 1000) / 1_000_000;
}
