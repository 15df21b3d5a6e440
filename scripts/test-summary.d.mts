/** The summary of a run's vitest JSON reports (see test-summary.mjs). */
export interface TestSummary {
  passed: number;
  failed: number;
  reports: number;
  /** The per-package wall times, the failed tests, then `N passed, N failed`. */
  lines: string[];
}

export function summarizeReports(dir: string, exitStatus?: number | null): TestSummary;

/** One step of a run: its exit status, and the test set whose reports would name its failures. */
export interface RunStep {
  name: string;
  set: "checks" | "light" | "heavy";
  status: number;
}

export function writeSteps(dir: string, steps: readonly RunStep[]): void;
