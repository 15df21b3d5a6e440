// The source design's S2 check across entries (issue 7): the research stages
// run from the CLI binary, from runResearch in code and through the
// dispatcher over a real WebSocket send byte-identical requests, each stage's
// doc as its system message, record the same DAG and write the same artifacts.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createDispatcher } from "@openprogram/dispatcher";
import { researchProgram, runResearch } from "@openprogram/research";
import { createScriptedAsker } from "@openprogram/session-context/host";
import { SessionDB } from "@openprogram/session-context/store";
import { readFileTree } from "@openprogram/session-context/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { MODEL_STAGE_DOCS, researchModel, stageOf } from "../../../packages/research/test/helpers/research-model.js";
import { dagShape, type NodeShape } from "./dag-shape.js";
import { createWorkspace, runCliJson, turnOverWebSocket, type Workspace } from "./entries.js";

type ResearchEntry = "code" | "cli" | "dispatcher";

interface ResearchStep {
  task: string;
  interactive: boolean;
  answers: string[];
  /** Continue the first step's session. */
  continues: boolean;
}

const STEPS: ResearchStep[] = [
  { task: "Survey how LLM agents stay reliable.", interactive: true, answers: ["2"], continues: false },
  { task: "Now turn it into a paper.", interactive: false, answers: [], continues: true },
  { task: "Unrelated: benchmarks for GUI agents.", interactive: false, answers: [], continues: false },
];

interface StepResult {
  sessionId: string;
  created: boolean;
  status: string;
  workDir: string;
}

interface ResearchRun {
  steps: StepResult[];
  bodies: string[];
  stages: string[];
  dags: NodeShape[][];
  artifacts: Array<Record<string, string>>;
}

/**
 * Every entry uses its default work dir, research/<session id> under its
 * working directory (the workspace's home), so a continued session continues
 * its files the same way everywhere.
 */
async function step(
  entry: ResearchEntry,
  workspace: Workspace,
  index: number,
  sessionId: string | undefined,
): Promise<StepResult> {
  const current = STEPS[index] as ResearchStep;
  const workDirOf = (id: string): string => join(workspace.home, "research", id);
  if (entry === "code") {
    const previous = process.cwd();
    process.chdir(workspace.home);
    try {
      const result = await runResearch(current.task, {
        db: workspace.db,
        runtime: workspace.runtime,
        interactive: current.interactive,
        asker: createScriptedAsker(current.answers),
        ...(sessionId ? { sessionId } : {}),
      });
      return {
        sessionId: result.sessionId,
        created: result.created,
        status: (result as { status?: string }).status ?? "completed",
        workDir: result.workDir,
      };
    } finally {
      process.chdir(previous);
    }
  }
  if (entry === "cli") {
    const args = ["research", current.task, "--json"];
    if (current.interactive) {
      const answers = join(workspace.home, `answers-${index}.json`);
      writeFileSync(answers, JSON.stringify(current.answers));
      args.push("--interactive", "--answers", answers);
    }
    if (sessionId) args.push("--session", sessionId);
    const parsed = await runCliJson<{ session_id: string; created: boolean; status: string; work_dir: string }>(args, {
      env: workspace.env,
      cwd: workspace.home,
    });
    expect(parsed.work_dir).toBe(workDirOf(parsed.session_id));
    return { sessionId: parsed.session_id, created: parsed.created, status: parsed.status, workDir: parsed.work_dir };
  }
  // What `openprogram serve` registers: the client names the task, the server places the files.
  const webRoot = join(workspace.home, "research");
  const dispatcher = await createDispatcher({
    db: workspace.db,
    runtime: workspace.runtime,
    port: 0,
    programs: { research: researchProgram({ workDirRoot: webRoot }) },
  });
  try {
    // The answers are what a person gives in the page's dialog.
    const turn = await turnOverWebSocket(
      dispatcher,
      {
        type: "run",
        program: "research",
        input: { task: current.task, interactive: current.interactive },
        ...(sessionId ? { session_id: sessionId } : {}),
      },
      current.answers,
    );
    return {
      sessionId: turn.sessionId,
      created: turn.created,
      status: (turn.result as { status?: string } | null)?.status ?? "completed",
      workDir: join(webRoot, turn.sessionId),
    };
  } finally {
    await dispatcher.close();
  }
}

/** The DAG with the work dir (different for every entry by design) masked. */
function maskedDag(nodes: Parameters<typeof dagShape>[0], workDir: string): NodeShape[] {
  return dagShape(nodes).map((node) =>
    node.name === "research_agent"
      ? {
          ...node,
          input: JSON.parse(
            JSON.stringify(node.input).split(JSON.stringify(workDir).slice(1, -1)).join("<work dir>"),
          ) as unknown,
        }
      : node,
  );
}

async function runEntry(entry: ResearchEntry): Promise<ResearchRun> {
  const workspace = await createWorkspace(researchModel({ mark: "run", decision: "revise" }));
  try {
    const steps: StepResult[] = [];
    for (let index = 0; index < STEPS.length; index++) {
      steps.push(await step(entry, workspace, index, STEPS[index]?.continues ? steps[0]?.sessionId : undefined));
    }
    const db = new SessionDB({ root: workspace.root });
    const sessions = [...new Set(steps.map((result) => result.sessionId))];
    const dags: NodeShape[][] = [];
    for (const sessionId of sessions) {
      const workDirs = steps.filter((result) => result.sessionId === sessionId).map((result) => result.workDir);
      let dag = maskedDag(await db.loadNodes(sessionId), workDirs[0] as string);
      for (const other of workDirs.slice(1))
        dag = dag.map((node) =>
          node.name === "research_agent"
            ? {
                ...node,
                input: JSON.parse(
                  JSON.stringify(node.input).split(JSON.stringify(other).slice(1, -1)).join("<work dir>"),
                ) as unknown,
              }
            : node,
        );
      dags.push(dag);
    }
    return {
      steps,
      bodies: workspace.server.requests.map((request) => request.body),
      stages: workspace.server.requests.map(stageOf),
      dags,
      artifacts: steps.map((result) => readFileTree(result.workDir)),
    };
  } finally {
    await workspace.cleanup();
  }
}

let reference: ResearchRun;
beforeAll(async () => {
  reference = await runEntry("code");
});

describe("research from code (runResearch): the reference", () => {
  it("runs every stage with its doc as the system message and continues only with the returned id", () => {
    expect(reference.steps.map((result) => [result.created, result.status])).toEqual([
      [true, "completed"],
      [false, "completed"],
      [true, "completed"],
    ]);
    expect(reference.steps[1]?.sessionId).toBe(reference.steps[0]?.sessionId);
    expect(reference.steps[2]?.sessionId).not.toBe(reference.steps[0]?.sessionId);
    expect(reference.steps[0]?.sessionId).toMatch(/^research_[0-9a-f]{10}$/);
    expect(new Set(reference.stages)).toEqual(new Set(Object.keys(MODEL_STAGE_DOCS)));
    for (const body of reference.bodies) {
      const messages = (JSON.parse(body) as { messages: Array<{ role: string; content: string }> }).messages;
      expect(Object.values(MODEL_STAGE_DOCS)).toContain(messages[0]?.content);
      // No stage passes its instructions in content.
      for (const message of messages.slice(1))
        for (const doc of Object.values(MODEL_STAGE_DOCS)) expect(message.content).not.toContain(doc.slice(0, 80));
    }
    // The interactive run asked, with the ideas as choices, and took the second idea.
    const question = reference.dags[0]?.find((node) => node.name === "ask_user");
    expect(question?.status).toBe("answered");
    expect((question?.choices as string[]).length).toBe(3);
    expect(question?.output).toMatch(/^2\. Step blame/);
    // The second run's first request shows the model the first run's outputs.
    const secondRunFirst = reference.bodies.findIndex(
      (body, index) => index > 0 && body.includes("Now turn it into a paper."),
    );
    expect(reference.bodies[secondRunFirst]).toContain("research_agent returned:");
    expect(reference.artifacts[0]).toHaveProperty(["paper/paper.md"]);
  });
});

describe.each(["cli", "dispatcher"] as const)("research through the %s entry", (entry) => {
  let run: ResearchRun;
  beforeAll(async () => {
    run = await runEntry(entry);
  });

  it("continues and separates sessions exactly as in code", () => {
    expect(
      run.steps.map((result) => [result.created, result.status]),
      `sessions from the ${entry} entry`,
    ).toEqual(reference.steps.map((result) => [result.created, result.status]));
    expect(run.steps[1]?.sessionId).toBe(run.steps[0]?.sessionId);
    expect(run.steps[2]?.sessionId).not.toBe(run.steps[0]?.sessionId);
  });

  it("sends byte-identical request bodies, stage by stage", () => {
    expect(run.stages, `stage order from the ${entry} entry`).toEqual(reference.stages);
    expect(
      run.bodies.map((body) => JSON.parse(body) as unknown),
      `request bodies from the ${entry} entry`,
    ).toEqual(reference.bodies.map((body) => JSON.parse(body) as unknown));
    expect(run.bodies, `raw request bytes from the ${entry} entry`).toEqual(reference.bodies);
  });

  it("records the same DAG and writes the same artifacts", () => {
    expect(run.dags, `the DAGs recorded by the ${entry} entry`).toEqual(reference.dags);
    expect(run.artifacts, `the artifacts written by the ${entry} entry`).toEqual(reference.artifacts);
  });
});
