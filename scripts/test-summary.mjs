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
// An error no test owned (an unawaited rejection, a throw in a late timer) fails
// vitest's run but not its JSON report; scripts/unhandled-errors-reporter.mjs
// writes each such error to `<package>[.heavy].unhandled.json`, and each counts
// as one failure here, named with its package. A non-zero exit status with no
// failure found otherwise means a step outside vitest failed (install, build,
// typecheck, lint, a vitest that crashed before its report): it counts as one,
// so the line never reads "0 failed" then.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Reads every `<package>[.heavy].json` report in `dir`; returns the counts and
 * the lines to print (the per-package times, then the summary line). A step of
 * the run that failed with no failing test of its own to explain it (lint, a
 * crashed vitest) counts as one failure and is named: `npm test` lists its steps
 * in `steps.tsv` (see writeSteps); without that file, a non-zero `exitStatus`
 * counts so when nothing else failed.
 */
export function summarizeReports(dir, exitStatus = 0) {
  let passed = 0;
  let failed = 0;
  const times = [];
  const failures = [];
  const failedBySet = { light: 0, heavy: 0 };
  const names = existsSync(dir) ? readdirSync(dir).sort() : [];
  for (const name of names) {
    const set = /\.heavy(\.unhandled)?\.json$/.test(name) ? "heavy" : "light";
    const failedBefore = failed;
    if (name.endsWith(UNHANDLED_SUFFIX)) {
      const { unhandledErrors = [] } = JSON.parse(readFileSync(join(dir, name), "utf8"));
      const where = name.slice(0, -UNHANDLED_SUFFIX.length);
      for (const error of unhandledErrors) {
        failed++;
        failures.push(`  ${where}: unhandled ${error.name}: ${firstLine(error.message)}${firstFrame(error.stack)}`);
      }
      failedBySet[set] += failed - failedBefore;
      continue;
    }
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
    failedBySet[set] += failed - failedBefore;
  }
  const steps = names.includes(STEPS_FILE) ? readSteps(join(dir, STEPS_FILE)) : undefined;
  for (const step of steps ?? []) {
    if (step.status === 0 || (step.set !== "checks" && failedBySet[step.set] > 0)) continue;
    failed++;
    failures.push(`  ${step.name} exited ${step.status} with no failing test to explain it: the log above says why`);
  }
  if (!steps && exitStatus !== 0 && failed === 0) {
    failed = 1;
    failures.push(`  the run exited ${exitStatus} with no failing test to explain it: the log above says why`);
  }
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

const UNHANDLED_SUFFIX = ".unhandled.json";
const STEPS_FILE = "steps.tsv";

/**
 * Records the steps of a run beside its reports, one `<exit status>\t<set>\t<name>` line each;
 * `set` is "checks" (build, typecheck, lint) or the test set ("light", "heavy") whose reports
 * would name its failures.
 */
export function writeSteps(dir, steps) {
  writeFileSync(join(dir, STEPS_FILE), steps.map((step) => `${step.status}\t${step.set}\t${step.name}\n`).join(""));
}

function readSteps(path) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [status, set, name] = line.split("\t");
      return { status: Number(status), set, name };
    });
}

/** " (at <the first stack frame>)", or nothing: where an unowned error was thrown. */
function firstFrame(stack = "") {
  const frame = String(stack)
    .split("\n")
    .find((line) => line.trim().startsWith("at "));
  return frame ? ` (${frame.trim()})` : "";
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
