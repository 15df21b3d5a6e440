// The summary line `npm test` and `.ci/run` end with: read from real vitest JSON reports of a
// small suite with every kind of failure, each must be counted and named (a timeout with a
// readable reason, a failing cleanup hook after passing tests, a file that does not load).
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { removeTree } from "@openprogram/session-context/testing";
import { afterAll, expect, it } from "vitest";
import { summarizeReports } from "../../../scripts/test-summary.mjs";

const SUITE = fileURLToPath(new URL("../fixtures/summary-suite", import.meta.url));
/** This package's own vitest (the workspace's version). */
const VITEST = fileURLToPath(new URL("../node_modules/.bin/vitest", import.meta.url));
const reports = mkdtempSync(join(tmpdir(), "openprogram-summary-"));
afterAll(() => removeTree(reports));

it("counts every failure of a real vitest run, names each, and ends with N passed, N failed", () => {
  const vitest = spawnSync(
    VITEST,
    ["run", "--config", join(SUITE, "vitest.config.mjs"), "--outputFile", join(reports, "suite.json")],
    { cwd: SUITE, encoding: "utf8", timeout: 60_000 },
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
  ]);
  expect(summary.passed).toBe(2);
  expect(summary.failed).toBe(3);
  expect(summary.lines.at(-1)).toBe("2 passed, 3 failed");
});
