// Issue 17 §5: one error vocabulary. A program's own bug (a TypeError after a
// model call) is reported with the same code, class name and message by every
// entry (the CLI's --json, the dispatcher's turn_failed, a child process, code),
// and recorded the same way on the node.
import { describe, expect, it } from "vitest";
import { createWorkspace, ENTRIES, runStep, StepFailure, type ReportedFailure } from "./entries.js";

const STEP = { exportName: "brokenPlan", input: { destination: "Lisbon" }, answers: [] };
const EXPECTED: ReportedFailure = {
  code: "error",
  name: "TypeError",
  message: "Cannot read properties of undefined (reading 'plan')",
};

describe.each(ENTRIES)("a program's TypeError through the %s entry", (entry) => {
  it("is reported as { code: error, name: TypeError, message } and recorded so on its node", async () => {
    const workspace = await createWorkspace(() => "not JSON, so the program's parse is skipped");
    try {
      const failure = await runStep(entry, workspace, STEP, undefined).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure, `what the ${entry} entry threw`).toBeInstanceOf(StepFailure);
      expect((failure as StepFailure).failure, `what the ${entry} entry reported`).toEqual(EXPECTED);
      const [session] = await workspace.db.listSessions();
      const nodes = await workspace.db.loadNodes(session?.id as string);
      expect(nodes.find((node) => node.name === "broken_plan")?.metadata.error).toMatchObject(EXPECTED);
      expect(workspace.server.requests).toHaveLength(1);
    } finally {
      await workspace.cleanup();
    }
  });
});
