// Durable turns through a child process (issue 14): a child stopped while its
// question waits is suspended, not failed, and the turn resumes through the
// same replay as in-process (the child's calls are in the record). A real
// HTTP server speaking the chat-completions protocol counts the requests.
import { sessionContext, TurnSuspendedError, type Asker, type Runtime } from "@openprogram/session-context";
import type { ProgramEntry } from "@openprogram/session-context/host";
import { createRuntime } from "@openprogram/session-context/runtime";
import { moduleProgramRef, resumeTurn } from "@openprogram/session-context/turns";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { pickDestination } from "./programs/destination.js";
import { programPath, useTempStore } from "./helpers.js";
import { normaliseNodes } from "./normalise.js";

const MODULE = programPath("destination.ts");
const INPUT = { region: "Portugal" };
const PROGRAM = { ref: moduleProgramRef(MODULE, "pickDestination"), input: INPUT };

describe("a turn that ran a child process", () => {
  const store = useTempStore();
  let server: FakeOpenAIServer;
  let runtime: Runtime;
  let childEnv: Record<string, string>;
  beforeEach(async () => {
    server = await startFakeOpenAIServer((request) => {
      const last = request.json.messages?.at(-1)?.content ?? "";
      return last.startsWith("Suggest") ? "Lisbon" : `a plan for: ${last}`;
    });
    runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    childEnv = {
      OPENPROGRAM_HOME: store.home,
      OPENPROGRAM_PROVIDER: "openai",
      OPENAI_BASE_URL: server.baseUrl,
      OPENPROGRAM_MODEL: "m",
      OPENPROGRAM_MAX_RETRIES: "0",
    };
  });
  afterEach(async () => server.close());

  /** The program as a dispatcher registers it with --isolate: each run in a child process. */
  const inChild: ProgramEntry = {
    run: (input) => runInChild({ module: MODULE, export: "pickDestination", input, env: childEnv }).result,
  };

  /** Runs the program in a child until its question waits, then suspends the turn (a server shutting down). */
  async function suspendAtQuestion(sessionId: string): Promise<void> {
    const controller = new AbortController();
    const suspending: Asker = {
      ask: (_request, { signal }) => {
        setTimeout(() => controller.abort(new TurnSuspendedError("the server is shutting down")), 10);
        return new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(new Error("stopped waiting")), { once: true }),
        );
      },
    };
    await expect(
      sessionContext(
        { sessionId, db: store.db, runtime, asker: suspending, program: PROGRAM, signal: controller.signal },
        () => inChild.run(INPUT),
      ),
    ).rejects.toMatchObject({ code: "cancelled" });
  }

  it("stopped at its question, the child suspends: the question stays waiting, the session needs_input", async () => {
    await suspendAtQuestion("suspended");
    const nodes = await store.db.loadNodes("suspended");
    expect(nodes.map((node) => [node.role, node.name, node.metadata.status])).toEqual([
      ["code", "pick_destination", "cancelled"],
      ["llm", "m", "completed"],
      ["user", "ask_user", "waiting"],
    ]);
    expect(nodes[0]?.metadata.resumable).toMatchObject({ program: PROGRAM.ref, input: INPUT });
    expect((await store.db.getSession("suspended"))?.status).toBe("needs_input");
    expect(server.requests).toHaveLength(1);
  });

  it("resumes in a child through the same replay as in-process: same DAG, each request sent once", async () => {
    await suspendAtQuestion("in_child");
    await suspendAtQuestion("in_process");
    expect(server.requests).toHaveLength(2);
    const expected = { destination: "Lisbon", style: "comfort", plan: "a plan for: Plan a comfort trip to Lisbon." };

    const there = await resumeTurn({
      sessionId: "in_child",
      db: store.db,
      runtime,
      asker: null,
      answer: "2",
      program: inChild,
    });
    expect(there).toEqual(expected);
    const here = await resumeTurn({
      sessionId: "in_process",
      db: store.db,
      runtime,
      asker: null,
      answer: "comfort",
      program: pickDestination,
    });
    expect(here).toEqual(expected);

    // The suggestion was replayed from the record in both; only the plan request is new, once per session.
    const bodies = server.requests.map((request) => request.body);
    expect(bodies).toHaveLength(4);
    expect(bodies[0]).toBe(bodies[1]);
    expect(bodies[2]).toBe(bodies[3]);
    expect(new Set(bodies).size).toBe(2);

    const childNodes = await store.db.loadNodes("in_child");
    expect(childNodes.map((node) => [node.role, node.name, node.metadata.status])).toEqual([
      ["code", "pick_destination", "cancelled"],
      ["llm", "m", "completed"],
      ["user", "ask_user", "answered"],
      ["code", "pick_destination", "completed"],
      ["llm", "m", "completed"],
    ]);
    expect(childNodes[3]?.metadata.resumes).toMatchObject({ node_id: childNodes[0]?.id });
    const shape = (nodes: typeof childNodes): unknown => normaliseNodes(nodes).map(({ seq: _seq, ...rest }) => rest);
    expect(shape(childNodes)).toEqual(shape(await store.db.loadNodes("in_process")));
    expect((await store.db.getSession("in_child"))?.status).toBe("idle");
  });
});
