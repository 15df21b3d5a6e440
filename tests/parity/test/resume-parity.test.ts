// The parity suite covers resume (issue 14, Proof): the same interrupted turn
// of the reference program, resumed from code (resumeTurn), from the CLI
// (`openprogram resume`) and in a child process (the process runner), records
// the same DAG, sends the model the same request bodies and returns the same
// result. Each entry is one case of RESUME_ENTRIES: the web entry (a `resume`
// frame over a real WebSocket) is one more case there.
import { runInChild } from "@openprogram/process-runner";
import {
  createScriptedAsker,
  isAgenticFunction,
  moduleProgramRef,
  resumeTurn,
  SessionDB,
  sessionContext,
} from "@openprogram/session-context";
import type { FakeReplyHandler } from "@openprogram/session-context/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { dagShape, type NodeShape } from "./dag-shape.js";
import { createWorkspace, REFERENCE_PROGRAM, runCliJson, type Workspace } from "./entries.js";

const SESSION_ID = "resume_parity";
const INPUT = { destination: "Lisbon", days: 3 };
/** The request that fails the first time: plan_trip's own model call, after its question and subcalls finished. */
const FAILING_REQUEST = 1;

/** How an entry resumes the interrupted turn; resolves to what the turn's program returned. */
type ResumeEntry = (workspace: Workspace) => Promise<unknown>;

const RESUME_ENTRIES: Record<string, ResumeEntry> = {
  // The reference: resumeTurn finds the program by the ref the turn recorded and runs it here.
  code: (workspace) => resumeTurn({ sessionId: SESSION_ID, db: workspace.db, runtime: workspace.runtime }),
  cli: async (workspace) =>
    (await runCliJson<{ result: unknown }>(["resume", SESSION_ID, "--json"], { env: workspace.env })).result,
  // The program runs in a child that joins the resumed turn and replays its part of the record there.
  "child process": (workspace) =>
    resumeTurn({
      sessionId: SESSION_ID,
      db: workspace.db,
      runtime: null,
      program: {
        run: (input) => runInChild({ module: REFERENCE_PROGRAM, export: "planTrip", input, env: workspace.env }).result,
      },
    }),
};

/** Replies by request order; the first try of FAILING_REQUEST fails with HTTP 500. */
const model: FakeReplyHandler = (request, index) => {
  if (index === FAILING_REQUEST) return { status: 500, message: "the model is down for a moment" };
  const last = [...(request.json.messages ?? [])].reverse().find((message) => message.role === "user")?.content ?? "";
  return `reply #${index + 1}: ${last.split("\n")[0]?.slice(0, 40) ?? ""}`;
};

/** What an entry's resume left: the result, every request body (the interrupted run's first), the DAG. */
interface ResumeRun {
  result: unknown;
  bodies: string[];
  dag: NodeShape[];
}

/** Runs the reference program in-process as the CLI would have (the program recorded) until the model fails. */
async function interruptedTurn(workspace: Workspace): Promise<void> {
  const module = (await import(REFERENCE_PROGRAM)) as Record<string, unknown>;
  const planTrip = module.planTrip;
  if (!isAgenticFunction(planTrip)) throw new Error("the reference program has no planTrip");
  const failure = await sessionContext(
    {
      sessionId: SESSION_ID,
      db: workspace.db,
      runtime: workspace.runtime,
      asker: createScriptedAsker(["comfort"]),
      program: { ref: moduleProgramRef(REFERENCE_PROGRAM, "planTrip"), input: INPUT },
      source: "test",
    },
    () => planTrip(INPUT),
  ).then(
    () => null,
    (error: unknown) => error as { code?: string },
  );
  expect(failure?.code, "the interrupted turn failed at the model").toBe("provider_error");
}

async function resumeWith(entry: ResumeEntry): Promise<ResumeRun> {
  const workspace = await createWorkspace(model);
  try {
    await interruptedTurn(workspace);
    const result = await entry(workspace);
    return {
      result,
      bodies: workspace.server.requests.map((request) => request.body),
      dag: dagShape(await new SessionDB({ root: workspace.root }).loadNodes(SESSION_ID)),
    };
  } finally {
    await workspace.cleanup();
  }
}

let reference: ResumeRun;
beforeAll(async () => {
  reference = await resumeWith(RESUME_ENTRIES.code as ResumeEntry);
});

describe("resuming the interrupted turn from code: the reference", () => {
  it("sends only the request that failed again, and records a continuation of the failed call", () => {
    // Two before the failure (the summary, plan_trip's own, which failed) and plan_trip's own again.
    expect(reference.bodies).toHaveLength(3);
    expect(reference.bodies[2]).toBe(reference.bodies[1]);
    expect(reference.result).toMatch(/^reply #3: Destination: Lisbon/);
    expect(
      reference.dag.map((node) => `${node.role}:${node.name}<${node.caller ?? ""}:${String(node.status)}`),
    ).toEqual([
      "code:plan_trip<:failed",
      "user:ask_user<0:answered",
      "code:look_up_visa<0:failed",
      "code:summarize_options<0:completed",
      "llm:parity-model<3:completed",
      "llm:parity-model<0:failed",
      // The resumed turn: a new top-level call; the finished calls above are replayed, not recorded again.
      "code:plan_trip<:completed",
      "llm:parity-model<6:completed",
    ]);
  });
});

describe.each(Object.keys(RESUME_ENTRIES).filter((entry) => entry !== "code"))(
  "resuming the interrupted turn through the %s entry",
  (entry) => {
    let run: ResumeRun;
    beforeAll(async () => {
      run = await resumeWith(RESUME_ENTRIES[entry] as ResumeEntry);
    });

    it("returns the same result", () => {
      expect(run.result, `the result resumed through the ${entry} entry`).toEqual(reference.result);
    });

    it("sends the model byte-identical request bodies", () => {
      expect(
        run.bodies.map((body) => JSON.parse(body) as unknown),
        `request bodies resumed through the ${entry} entry`,
      ).toEqual(reference.bodies.map((body) => JSON.parse(body) as unknown));
      expect(run.bodies, `raw request bytes resumed through the ${entry} entry`).toEqual(reference.bodies);
    });

    it("records the same DAG", () => {
      expect(run.dag, `the DAG resumed through the ${entry} entry`).toEqual(reference.dag);
    });
  },
);
