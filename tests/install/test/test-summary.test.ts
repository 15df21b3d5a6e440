// The summary line `npm test` and `.ci/run` end with: read from real vitest JSON reports of a
// small suite with every kind of failure, each must be counted and named (a timeout with a
// readable reason, a failing cleanup hook after passing tests, a file that does not load, a
// rejection nobody awaited, which vitest's JSON report drops).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { removeTree } from "@openprogram/session-context/testing";
import { afterAll, expect, it } from "vitest";
import { summarizeReports, writeSteps } from "../../../scripts/test-summary.mjs";

const SUITE = fileURLToPath(new URL("../fixtures/summary-suite", import.meta.url));
/** This package's own vitest (the workspace's version). */
const VITEST = fileURLToPath(new URL("../node_modules/.bin/vitest", import.meta.url));
const reports = mkdtempSync(join(tmpdir(), "openprogram-summary-"));
afterAll(() => removeTree(reports));

it("counts every failure of a real vitest run, names each, and ends with N passed, N failed", () => {
  const vitest = spawnSync(
    VITEST,
    ["run", "--config", join(SUITE, "vitest.config.mjs"), "--outputFile", join(reports, "suite.json")],
    {
      cwd: SUITE,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, SUMMARY_UNHANDLED_FILE: join(reports, "suite.unhandled.json") },
    },
  );
  expect(vitest.status, vitest.stderr).toBe(1);

  const summary = summarizeReports(reports, vitest.status);
  const failures = summary.lines.filter((line) => line.startsWith("  suite: "));
  expect(failures.sort()).toEqual([
    expect.stringMatching(/^ {2}suite: \S*cleanup-fails\.check\.mjs: could not remove the work dir$/),
    expect.stringMatching(/^ {2}suite: \S*does-not-load\.check\.mjs: .*no-such-module/),
    expect.stringMatching(
      /^ {2}suite: \S*times-out\.check\.mjs > waits too long: timed out \(its timeout is in the log above\)$/,
    ),
    expect.stringMatching(/^ {2}suite: unhandled Error: nobody awaited this \(at .*leaves-a-rejection\.check\.mjs/),
  ]);
  expect(summary.passed).toBe(3);
  expect(summary.failed).toBe(4);
  expect(summary.lines.at(-1)).toBe("3 passed, 4 failed");
});

it("names a failed step that no failing test explains, and counts it once", () => {
  const dir = join(reports, "steps");
  mkdirSync(dir, { recursive: true });
  // A light report with one failing test (it explains the light step's exit status), a clean
  // heavy report, a lint that failed, and a heavy step that failed with nothing in its report.
  const report = (failedTests: number) => ({
    numPassedTests: 1,
    numFailedTests: failedTests,
    startTime: 1,
    testResults: [
      {
        name: "/repo/packages/x/test/a.test.ts",
        status: failedTests > 0 ? "failed" : "passed",
        endTime: 2,
        assertionResults: [
          { status: "passed", title: "ok" },
          ...(failedTests > 0 ? [{ status: "failed", title: "breaks", failureMessages: ["Error: broke"] }] : []),
        ],
      },
    ],
  });
  writeFileSync(join(dir, "x.json"), JSON.stringify(report(1)));
  writeFileSync(join(dir, "x.heavy.json"), JSON.stringify(report(0)));
  writeSteps(dir, [
    { name: "build, typecheck and lint", set: "checks", status: 2 },
    { name: "light tests", set: "light", status: 1 },
    { name: "heavy tests", set: "heavy", status: 1 },
  ]);

  const summary = summarizeReports(dir, 1);
  expect(summary.lines.filter((line) => line.startsWith("  ") && !/ s$/.test(line))).toEqual([
    "  x: test/a.test.ts > breaks: Error: broke",
    "  build, typecheck and lint exited 2 with no failing test to explain it: the log above says why",
    "  heavy tests exited 1 with no failing test to explain it: the log above says why",
  ]);
  expect(summary.lines.at(-1)).toBe("2 passed, 3 failed");
});
