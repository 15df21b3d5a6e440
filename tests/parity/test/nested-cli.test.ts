// Context across any process boundary (issue 8 section 2): an `openprogram
// run` started from inside an agentic function joins the same session and
// turn, under the calling node, with nothing passed but contextCarrierEnv().
import { fileURLToPath } from "node:url";
import { CLI_BIN } from "@openprogram/cli/testing";
import { sessionContext } from "@openprogram/session-context";
import { traceparentFor } from "@openprogram/session-context/relay";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./entries.js";

const PROGRAM = fileURLToPath(new URL("../programs/nested-cli.mjs", import.meta.url));

let workspace: Workspace | undefined;
afterEach(async () => workspace?.cleanup());

describe("a nested openprogram run joins the caller's session", () => {
  it("records the child's calls under the calling node, in the same turn, committed once by the parent", async () => {
    workspace = await createWorkspace(() => "the step, in one line");
    const { delegate } = (await import(PROGRAM)) as {
      delegate: (input: object) => Promise<{
        child: { session_id: string; created: boolean; turn_id: string; result: { traceparent: string } };
        stderr: string;
      }>;
    };
    // The child CLI reads its provider from the environment, like any entry.
    Object.assign(process.env, {
      OPENAI_BASE_URL: workspace.server.baseUrl,
      OPENPROGRAM_PROVIDER: "openai",
      OPENPROGRAM_MODEL: "parity-model",
      OPENPROGRAM_MAX_RETRIES: "0",
    });
    try {
      const outcome = await sessionContext({ db: workspace.db, runtime: workspace.runtime }, async (session) => ({
        session,
        out: await delegate({ cli: CLI_BIN, step: "book the train" }),
      }));
      const { session, out } = outcome;
      expect(out.child.session_id).toBe(session.sessionId);
      expect(out.child.created).toBe(false);
      expect(out.child.turn_id).toBe(session.turnId);
      expect(out.stderr).toContain(`session: ${session.sessionId}`);

      const nodes = await workspace.db.loadNodes(session.sessionId);
      const byId = new Map(nodes.map((node) => [node.id, node]));
      expect(nodes.map((node) => `${node.role}:${node.name}<${byId.get(node.caller)?.name ?? ""}`)).toEqual([
        "code:delegate<",
        "code:child_step<delegate",
        "llm:parity-model<child_step",
      ]);
      expect(nodes.every((node) => node.metadata.status === "completed")).toBe(true);
      // W3C trace context: the child's TRACEPARENT names this turn's trace and the calling node as its parent span.
      expect(out.child.result.traceparent).toBe(
        traceparentFor(session.sessionId, session.turnId, nodes[0]?.id as string),
      );
      // The child sent the doc of its own function, from its own process.
      expect(JSON.parse(workspace.server.requests[0]?.body as string)).toMatchObject({
        messages: [
          { role: "system", content: "Describe the step in one line." },
          { role: "user", content: "Step: book the train" },
        ],
      });
      // One turn, one commit, made by the parent.
      expect((await workspace.db.gitLog(session.sessionId)).map((entry) => entry.message)).toEqual([
        `turn ${session.turnId} (code)`,
        "session init",
      ]);
    } finally {
      for (const name of ["OPENAI_BASE_URL", "OPENPROGRAM_PROVIDER", "OPENPROGRAM_MODEL", "OPENPROGRAM_MAX_RETRIES"])
        delete process.env[name];
    }
  });
});
