#!/usr/bin/env node
// The end of a test run, for `npm test` and `.ci/run` alike: the wall time of
// each package's tests (light and heavy sets apart, slowest first, so a suite
// creeping towards its timeouts is seen before it fails), then one plain line,
// "N passed, N failed", summed from vitest's JSON reports. Failing tests are
// named (file, title, first line of the message) just above that line, so a
// CI log cut to its tail still says what failed.
//
//   node scripts/test-summary.mjs <report dir> [exit status of the run]
//
// A non-zero exit status with no failing test means a step outside vitest
// failed (install, build, typecheck, lint, a vitest that crashed before its
// report): it counts as one failure, so the line never reads "0 failed" then.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Reads every `<package>[.heavy].json` report in `dir`; returns the counts and
 * the lines to print (the per-package times, then the summary line).
 */
export function summarizeReports(dir, exitStatus = 0) {
  let passed = 0;
  let failed = 0;
  const times = [];
  const failures = [];
  for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
    if (!name.endsWith(".json")) continue;
    const report = JSON.parse(readFileSync(join(dir, name), "utf8"));
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    const files = report.testResults ?? [];
    for (const file of files) {
      const where = `${name.replace(/\.json$/, "")}: ${relativeTestPath(file.name)}`;
      // A file that failed with no failing test (it did not load, or a beforeAll/afterAll hook
      // failed after its tests passed) still failed: it counts as one.
      const failedTests = (file.assertionResults ?? []).filter((test) => test.status === "failed").length;
      if (file.status === "failed" && failedTests === 0) {
        failed++;
        failures.push(`  ${where}: ${firstLine(file.message) || "failed to load"}`);
      }
      for (const test of file.assertionResults ?? []) {
        if (test.status !== "failed") continue;
        failures.push(`  ${where} > ${test.fullName ?? test.title}: ${firstLine(test.failureMessages?.[0])}`);
      }
    }
    const end = Math.max(report.startTime ?? 0, ...files.map((file) => file.endTime ?? 0));
    const label = name.replace(/\.json$/, "").replace(/\.heavy$/, " (heavy)");
    times.push({ label, seconds: report.startTime ? (end - report.startTime) / 1000 : 0 });
  }
  if (exitStatus !== 0 && failed === 0) failed = 1;
  times.sort((a, b) => b.seconds - a.seconds);
  const width = Math.max(0, ...times.map((entry) => entry.label.length));
  const lines = [
    `test wall time per package (${times.length} reports):`,
    ...times.map((entry) => `  ${entry.label.padEnd(width)}  ${entry.seconds.toFixed(1).padStart(6)} s`),
    ...(failures.length > 0 ? [`failed tests (${failures.length}):`, ...failures] : []),
    `${passed} passed, ${failed} failed`,
  ];
  return { passed, failed, reports: times.length, lines };
}

function relativeTestPath(path = "") {
  const at = path.lastIndexOf("/test/");
  return at >= 0 ? path.slice(at + 1) : path;
}

function firstLine(message = "") {
  // vitest's JSON report gives a test that timed out this placeholder instead of its message.
  if (String(message).startsWith("Error: STACK_TRACE_ERROR")) return "timed out (its timeout is in the log above)";
  return (
    String(message)
      .split("\n")
      .find((line) => line.trim() !== "")
      ?.trim()
      .slice(0, 240) ?? ""
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [dir, status = "0"] = process.argv.slice(2);
  if (!dir) {
    process.stderr.write("usage: node scripts/test-summary.mjs <report dir> [exit status of the run]\n");
    process.exit(2);
  }
  const summary = summarizeReports(dir, Number(status));
  process.stdout.write(`${summary.lines.join("\n")}\n`);
  process.exitCode = summary.failed === 0 ? 0 : 1;
}
