// Benchmarks print each figure beside a baseline measured in the same run, and
// the ratio; medians only. With OPENPROGRAM_BENCH_REPORT set, every figure is
// also appended there as a JSON line, and `pnpm bench` prints one table.
import { appendFileSync } from "node:fs";

/** One measured figure. */
export interface BenchFigure {
  package: string;
  metric: string;
  unit: "ms" | "µs" | "turns/s" | "MiB";
  median: number;
  /** The baseline measured in the same run, if this figure has one. */
  baseline?: number;
  baselineLabel?: string;
  /** The target from the issue, e.g. "<= 1.3x baseline" or "<= 250 ms". */
  target?: string;
  /** Whether the target holds (undefined when there is none). */
  met?: boolean;
  samples?: number;
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A percentile (0-100) of a list of numbers. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/** Times `fn` `iterations` times after `warmup` runs; returns per-run milliseconds. */
export async function sample(fn: () => unknown, options: { iterations: number; warmup?: number }): Promise<number[]> {
  for (let index = 0; index < (options.warmup ?? Math.min(10, options.iterations)); index++) await fn();
  const times: number[] = [];
  for (let index = 0; index < options.iterations; index++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times;
}

/** Fewer iterations when OPENPROGRAM_BENCH_QUICK is set (CI smoke runs). */
export function iterations(full: number): number {
  return process.env.OPENPROGRAM_BENCH_QUICK ? Math.max(3, Math.ceil(full / 10)) : full;
}

/** Prints a figure (with its baseline and ratio) and appends it to the report file. */
export function report(figure: BenchFigure): void {
  const value = format(figure.median, figure.unit);
  const parts = [`${figure.metric}: ${value}`];
  if (figure.baseline !== undefined) {
    parts.push(`baseline ${figure.baselineLabel ?? ""} ${format(figure.baseline, figure.unit)}`.replace("  ", " "));
    parts.push(`ratio ${(figure.median / figure.baseline).toFixed(2)}x`);
  }
  if (figure.target)
    parts.push(`target ${figure.target}${figure.met === undefined ? "" : figure.met ? " (met)" : " (NOT met)"}`);
  process.stdout.write(`${parts.join(" | ")}\n`);
  const file = process.env.OPENPROGRAM_BENCH_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify(figure)}\n`);
}

/** Renders a number with a sensible precision for its unit. */
export function format(value: number, unit: BenchFigure["unit"]): string {
  if (!Number.isFinite(value)) return `n/a ${unit}`;
  const digits = value >= 100 ? 0 : value >= 10 ? 1 : value >= 1 ? 2 : 3;
  return `${value.toFixed(digits)} ${unit}`;
}

/**
 * One line comparing two checkouts' samples of a figure, taken in alternating rounds (bench/compare.ts and the
 * like): each side's median, the ratio this / other, and every sample.
 */
export function comparisonLine(label: string, ours: readonly number[], theirs: readonly number[], digits = 2): string {
  const each = (values: readonly number[]): string => values.map((value) => value.toFixed(digits)).join(", ");
  const [mine, other] = [median(ours), median(theirs)];
  return `${label}: this ${mine.toFixed(2)} | other ${other.toFixed(2)} | ratio ${(mine / other).toFixed(2)}x  (this: ${each(ours)}; other: ${each(theirs)})`;
}
