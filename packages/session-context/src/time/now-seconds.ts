/** Unix seconds with microsecond resolution, like Python's time.time(). */
export function nowSeconds(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000) / 1_000_000;
}
