// Issue 34: a recording made through one entry replays through every other when the program is the same.
// The reference scenario (a planning turn with a question, then a continuation) is recorded through the CLI
// (`run --record`, one file per turn) against the loopback model; with that server gone and no provider
// configured, each turn is replayed from its file through in-process code, the CLI (`OPENPROGRAM_REPLAY`),
// the dispatcher (a replaying runtime) and a child process (whose calls the parent's replay answers): the
// same results and the same DAG as the recorded run.
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInChild } from "@openprogram/process-runner";
import { sessionContext } from "@openprogram/session-context";
import { createScriptedAsker } from "@openprogram/session-context/host";
import { ReplayProvider } from "@openprogram/session-context/recordings";
import { ModelRuntime } from "@openprogram/session-context/runtime";
import { SessionDB } from "@openprogram/session-context/store";
import { removeTree } from "@openprogram/session-context/testing";
import { dagShape, type NodeShape } from "./dag-shape.js";
import {
  createWorkspace,
  parityEnv,
  REFERENCE_PROGRAM,
  runStep,
  TRIP_STEPS,
  tripReply,
  type EntryName,
  type Step,
  type StepOutcome,
  type Workspace,
} from "./entries.js";

interface Recorded {
  files: string[];
  outcomes: StepOutcome[];
  dag: NodeShape[];
}

let home: string;
let recorded: Recorded;

/** A store of its own, and an environment with no provider at all: only the recording can answer. */
function replayWorkspace(name: string, file: string): Workspace {
  const dir = join(home, name);
  const root = join(dir, "sessions");
  mkdirSync(dir, { recursive: true });
  const env = parityEnv(dir, "http://127.0.0.1:9/unused");
  delete (env as Record<string, string | undefined>).OPENPROGRAM_PROVIDER;
  delete (env as Record<string, string | undefined>).OPENAI_BASE_URL;
  const provider = new ReplayProvider(file);
  return {
    home: dir,
    root,
    db: new SessionDB({ root }),
    server: undefined as never,
    runtime: new ModelRuntime(provider, provider.recording.calls[0]?.model ?? "replay"),
    env: { ...env, OPENPROGRAM_REPLAY: file },
    cleanup: async () => undefined,
  };
}

/** A child process under a parent whose runtime replays: the child's calls are answered from the parent's file. */
async function runInChildUnderReplay(workspace: Workspace, step: Step, sessionId: string | undefined) {
  return sessionContext(
    {
      db: workspace.db,
      runtime: workspace.runtime,
      asker: createScriptedAsker(step.answers),
      source: "test",
      ...(sessionId ? { sessionId } : {}),
    },
    async (session) => ({
      sessionId: session.sessionId,
      created: session.created,
      result: await runInChild({ module: REFERENCE_PROGRAM, export: step.exportName, input: step.input }).result,
    }),
  );
}

async function replayThrough(entry: EntryName | "child-under-replay"): Promise<Recorded> {
  const outcomes: StepOutcome[] = [];
  let root = "";
  for (const [index, step] of TRIP_STEPS.entries()) {
    const workspace = replayWorkspace(entry, recorded.files[index]!);
    root = workspace.root;
    const sessionId = outcomes[0]?.sessionId;
    outcomes.push(
      entry === "child-under-replay"
        ? await runInChildUnderReplay(workspace, step, sessionId)
        : await runStep(entry, workspace, step, sessionId),
    );
  }
  const nodes = await new SessionDB({ root }).loadNodes(outcomes[0]!.sessionId);
  return { files: [], outcomes, dag: dagShape(nodes) };
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), "openprogram-recording-parity-"));
  const live = await createWorkspace(tripReply);
  try {
    const files = TRIP_STEPS.map((_step, index) => join(home, `turn-${index + 1}.jsonl`));
    const outcomes: StepOutcome[] = [];
    for (const [index, step] of TRIP_STEPS.entries()) {
      const recording = { ...live, env: { ...live.env, OPENPROGRAM_RECORD: files[index]! } };
      outcomes.push(await runStep("cli", recording, step, outcomes[0]?.sessionId));
    }
    expect(live.server.requests).toHaveLength(3);
    const nodes = await new SessionDB({ root: live.root }).loadNodes(outcomes[0]!.sessionId);
    recorded = { files, outcomes, dag: dagShape(nodes) };
  } finally {
    await live.cleanup();
  }
}, 120_000);
afterAll(() => removeTree(home));

describe.each(["in-process", "cli", "dispatcher", "child-process", "child-under-replay"] as const)(
  "a recording made through the CLI, replayed through %s",
  (entry) => {
    it("gives the same results and records the same DAG, with the model server gone", async () => {
      const replayed = await replayThrough(entry);
      expect(replayed.outcomes.map((outcome) => outcome.result)).toEqual(
        recorded.outcomes.map((outcome) => outcome.result),
      );
      expect(replayed.outcomes.map((outcome) => outcome.created)).toEqual([true, false]);
      expect(replayed.dag, `the DAG recorded replaying through ${entry}`).toEqual(recorded.dag);
    }, 60_000);
  },
);
