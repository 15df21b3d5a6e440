// After a turn that ended normally, the session's git repository is clean and
// `sessions doctor` has nothing to say, whichever entry ran the turn (issue 12
// section 2: meta.json's updated_at used to be written after the turn's commit,
// leaving ` M meta.json` and an uncommitted_tail warning in every session).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { runCli } from "@openprogram/cli/testing";
import { doctorSessions } from "@openprogram/session-context/store";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkspace, ENTRIES, runStep, type Step, type Workspace } from "./entries.js";

/** A new session, then a turn that continues it (the first turn asks a question and catches a failure). */
const STEPS: Step[] = [
  { exportName: "planTrip", input: { destination: "Lisbon", days: 3 }, answers: ["comfort"] },
  { exportName: "refinePlan", input: { request: "Make day two cheaper." }, answers: [] },
];

let workspace: Workspace | undefined;
afterEach(async () => {
  await workspace?.cleanup();
  workspace = undefined;
});

/** `git status --porcelain` of a session's repository, untracked files included. */
function gitStatus(sessionDir: string): string {
  return execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
    cwd: sessionDir,
    encoding: "utf8",
  });
}

describe("a session's repository after a turn that ended normally", () => {
  it.each(ENTRIES)("is clean, and doctor is silent, after each turn through %s", async (entry) => {
    const current = await createWorkspace((_request, index) => `reply #${index + 1}`);
    workspace = current;
    let sessionId: string | undefined;
    for (const step of STEPS) {
      sessionId = (await runStep(entry, current, step, sessionId)).sessionId;
      const after = `after ${step.exportName} through ${entry}`;
      expect(gitStatus(join(current.root, sessionId)), `git status ${after}`).toBe("");
      expect((await doctorSessions({ db: current.db })).findings, `doctor findings ${after}`).toEqual([]);
      const doctor = await runCli(["sessions", "doctor"], { env: current.env });
      expect(doctor.stdout, `openprogram sessions doctor ${after}`).toBe("");
      expect(doctor.stderr).toMatch(/1 session\(s\) in .*: no problems found/);
      expect(doctor.code).toBe(0);
    }
  });
});
