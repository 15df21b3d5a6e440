// The parity suite covers resume (issue 14, Proof): the same interrupted turn
// of the reference program, resumed from code (resumeTurn), from the CLI
// (`openprogram resume`, or `openprogram answer` for a waiting question) and
// in a child process (the process runner) and from the web, records the same DAG, sends the
// model the same request bodies and returns the same result; for a turn that
// failed at the model and for one stopped while its question waited. Each
// entry is one case of RESUME_ENTRIES, the web entry (a `resume` frame, or the
// `answer` frame to the question a restarted server shows) among them.
import { createDispatcher } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { runInChild } from "@openprogram/process-runner";
import { isAgenticFunction, sessionContext, TurnSuspendedError, type Asker } from "@openprogram/session-context";
import { createScriptedAsker } from "@openprogram/session-context/host";
import { SessionDB } from "@openprogram/session-context/store";
import { moduleProgramRef, resumeTurn } from "@openprogram/session-context/turns";
import type { FakeReplyHandler } from "@openprogram/session-context/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { dagShape, type NodeShape } from "./dag-shape.js";
import { createWorkspace, REFERENCE_PROGRAM, runCliJson, type Workspace } from "./entries.js";

const SESSION_ID = "resume_parity";
const INPUT = { destination: "Lisbon", days: 3 };
/** The request that fails the first time: plan_trip's own model call, after its question and subcalls finished. */
const FAILING_REQUEST = 1;

/** How an entry resumes the interrupted turn (with `answer` for its waiting question); resolves to what the program returned. */
type ResumeEntry = (workspace: Workspace, answer: string | undefined) => Promise<unknown>;

const RESUME_ENTRIES: Record<string, ResumeEntry> = {
  // The reference: resumeTurn finds the program by the ref the turn recorded and runs it here.
  code: (workspace, answer) =>
    resumeTurn({ sessionId: SESSION_ID, db: workspace.db, runtime: workspace.runtime, ...(answer ? { answer } : {}) }),
  cli: async (workspace, answer) =>
    (
      await runCliJson<{ result: unknown }>(
        answer ? ["answer", SESSION_ID, answer, "--json"] : ["resume", SESSION_ID, "--json"],
        { env: workspace.env },
      )
    ).result,
  // The program runs in a child that joins the resumed turn and replays its part of the record there.
  "child process": (workspace, answer) =>
    resumeTurn({
      sessionId: SESSION_ID,
      db: workspace.db,
      runtime: null,
      ...(answer ? { answer } : {}),
      program: {
        run: (input) => runInChild({ module: REFERENCE_PROGRAM, export: "planTrip", input, env: workspace.env }).result,
      },
    }),
  // Over a real WebSocket, as the page does: `resume`, or the `answer` to the question the restarted server shows.
  web: async (workspace, answer) => {
    const module = (await import(REFERENCE_PROGRAM)) as Record<string, unknown>;
    if (!isAgenticFunction(module.planTrip)) throw new Error("the reference program has no planTrip");
    const dispatcher = await createDispatcher({
      db: workspace.db,
      runtime: workspace.runtime,
      port: 0,
      programs: { plan_trip: module.planTrip },
      programRefs: { plan_trip: moduleProgramRef(REFERENCE_PROGRAM, "planTrip") },
    });
    const client = await TestClient.connect(dispatcher.wsUrl, { headers: { origin: dispatcher.url } });
    try {
      if (answer === undefined) client.send({ type: "resume", session_id: SESSION_ID });
      else {
        client.send({ type: "subscribe", session_id: SESSION_ID });
        const question = await client.next("question");
        client.send({ type: "answer", session_id: SESSION_ID, question_id: question.question_id, value: answer });
      }
      const ended = await client.next(["turn_done", "turn_failed", "error"]);
      if (ended.type !== "turn_done") throw new Error(`dispatcher: ${JSON.stringify(ended)}`);
      return ended.result;
    } finally {
      client.close();
      await dispatcher.close();
    }
  },
};

/** Replies by request order; while `failing` is set, FAILING_REQUEST fails with HTTP 500. */
let failing = true;
const model: FakeReplyHandler = (request, index) => {
  if (failing && index === FAILING_REQUEST) return { status: 500, message: "the model is down for a moment" };
  const last = [...(request.json.messages ?? [])].reverse().find((message) => message.role === "user")?.content ?? "";
  return `reply #${index + 1}: ${last.split("\n")[0]?.slice(0, 40) ?? ""}`;
};

/** How the turn was stopped, and the answer its resume gives (a question left waiting needs one). */
interface Interruption {
  asker: () => { asker: Asker; signal?: AbortSignal };
  failing: boolean;
  /** The error code the stopped turn rejected with. */
  code: string;
  answer?: string;
}

const INTERRUPTIONS: Record<string, Interruption> = {
  "failed at the model": {
    asker: () => ({ asker: createScriptedAsker(["comfort"]) }),
    failing: true,
    code: "provider_error",
  },
  // As a server that stops (SIGTERM) or a CLI run stopped by Ctrl-C leaves it: the question waits on disk.
  "stopped while its question waited": {
    asker: () => {
      const controller = new AbortController();
      const asker: Asker = {
        ask: (_request, { signal }) => {
          setTimeout(() => controller.abort(new TurnSuspendedError("the process is stopping")), 10);
          return new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(new Error("the question stopped waiting")), { once: true }),
          );
        },
      };
      return { asker, signal: controller.signal };
    },
    failing: false,
    code: "cancelled",
    answer: "comfort",
  },
};

/** What an entry's resume left: the result, every request body (the interrupted run's first), the DAG. */
interface ResumeRun {
  result: unknown;
  bodies: string[];
  dag: NodeShape[];
}

/** Runs the reference program in-process as the CLI would have (the program recorded) until it is stopped. */
async function interruptedTurn(workspace: Workspace, interruption: Interruption): Promise<void> {
  const module = (await import(REFERENCE_PROGRAM)) as Record<string, unknown>;
  const planTrip = module.planTrip;
  if (!isAgenticFunction(planTrip)) throw new Error("the reference program has no planTrip");
  failing = interruption.failing;
  const failure = await sessionContext(
    {
      sessionId: SESSION_ID,
      db: workspace.db,
      runtime: workspace.runtime,
      ...interruption.asker(),
      program: { ref: moduleProgramRef(REFERENCE_PROGRAM, "planTrip"), input: INPUT },
      source: "test",
    },
    () => planTrip(INPUT),
  ).then(
    () => null,
    (error: unknown) => error as { code?: string },
  );
  failing = false;
  expect(failure?.code, "the turn was stopped").toBe(interruption.code);
}

async function resumeWith(interruption: Interruption, entry: ResumeEntry): Promise<ResumeRun> {
  const workspace = await createWorkspace(model);
  try {
    await interruptedTurn(workspace, interruption);
    const result = await entry(workspace, interruption.answer);
    return {
      result,
      bodies: workspace.server.requests.map((request) => request.body),
      dag: dagShape(await new SessionDB({ root: workspace.root }).loadNodes(SESSION_ID)),
    };
  } finally {
    await workspace.cleanup();
  }
}

describe.each(Object.keys(INTERRUPTIONS))("a turn %s", (interruptionName) => {
  const interruption = INTERRUPTIONS[interruptionName] as Interruption;
  let reference: ResumeRun;
  beforeAll(async () => {
    reference = await resumeWith(interruption, RESUME_ENTRIES.code as ResumeEntry);
  });

  it("resumed from code (the reference) repeats only a request that failed, and continues the stopped call", () => {
    const shape = reference.dag.map((node) => `${node.role}:${node.name}<${node.caller ?? ""}:${String(node.status)}`);
    expect(reference.result).toMatch(/^reply #\d: Destination: Lisbon/);
    if (interruption.failing) {
      // The summary, plan_trip's own request (which failed), and that request again.
      expect(reference.bodies).toHaveLength(3);
      expect(reference.bodies[2]).toBe(reference.bodies[1]);
      expect(shape).toEqual([
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
    } else {
      // Nothing had reached the model: the resumed turn sends each request once.
      expect(reference.bodies).toHaveLength(2);
      expect(shape).toEqual([
        "code:plan_trip<:cancelled",
        // The question that waited, answered in place.
        "user:ask_user<0:answered",
        "code:plan_trip<:completed",
        "code:look_up_visa<2:failed",
        "code:summarize_options<2:completed",
        "llm:parity-model<4:completed",
        "llm:parity-model<2:completed",
      ]);
    }
  });

  describe.each(Object.keys(RESUME_ENTRIES).filter((entry) => entry !== "code"))(
    "resumed through the %s entry",
    (entry) => {
      let run: ResumeRun;
      beforeAll(async () => {
        run = await resumeWith(interruption, RESUME_ENTRIES[entry] as ResumeEntry);
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
});
