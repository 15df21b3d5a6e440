import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCliHome, program, PYTHON_SESSIONS_FIXTURE, runCli, sessionIdFrom, type CliHome } from "./helpers/cli.js";

let home: CliHome | undefined;
afterEach(() => home?.cleanup());

describe("openprogram sessions doctor", () => {
  it("runs clean on the Python fixtures", async () => {
    home = createCliHome({ from: PYTHON_SESSIONS_FIXTURE });
    const result = await runCli(["sessions", "doctor"], { env: home.env() });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/2 session\(s\) in .*: no problems found/);
  });

  it("reports damage with exit 1, repairs it with --fix, and is clean afterwards", async () => {
    home = createCliHome();
    const run = await runCli(["run", program("ask-choice.mjs"), "--answers", home.file("answers.txt", "1\n")], {
      env: home.env(),
    });
    expect(run.code).toBe(0);
    const sessionId = sessionIdFrom(run.stderr);
    // A hand edit breaks the head, and the registry loses the session.
    const metaPath = join(home.root, sessionId, "meta.json");
    const meta = JSON.parse(readFileSync(metaPath, "utf8")) as Record<string, unknown>;
    writeFileSync(metaPath, JSON.stringify({ ...meta, head_id: "ffffffffffff" }));
    writeFileSync(join(home.root, "index.json"), "{}");

    const check = await runCli(["sessions", "doctor"], { env: home.env() });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`error   ${sessionId}  dangling_head:`);
    expect(check.stdout).toContain(`error   ${sessionId}  registry_missing_entry:`);
    expect(check.stderr).toContain("Run with --fix");

    const json = await runCli(["sessions", "doctor", sessionId, "--json"], { env: home.env() });
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { healthy: boolean; findings: Array<{ kind: string; fixed: boolean }> };
    expect(report.healthy).toBe(false);
    expect(report.findings.map((finding) => finding.kind)).toContain("dangling_head");

    const fix = await runCli(["sessions", "doctor", "--fix"], { env: home.env() });
    expect(fix.code).toBe(0);
    expect(fix.stdout).toContain(`fixed   ${sessionId}  dangling_head:`);
    expect((await runCli(["sessions", "doctor"], { env: home.env() })).code).toBe(0);
    expect((await runCli(["sessions", "list", "--json"], { env: home.env() })).stdout).toContain(sessionId);
    expect(readdirSync(home.root)).toContain(sessionId);
  });

  it("names an unknown session with exit 2", async () => {
    home = createCliHome();
    const result = await runCli(["sessions", "doctor", "missing_one"], { env: home.env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("missing_one");
  });
});
