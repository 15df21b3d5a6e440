// One driver per entry point. Each runs a step (an agentic function with its
// input and the user's answers, optionally continuing a session) exactly as a
// user of that entry would, against a fresh store and a loopback server
// speaking the OpenAI chat-completions protocol, and reports what happened.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "@openprogram/cli/testing";
import { createDispatcher, type Dispatcher } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { runInChild } from "@openprogram/process-runner";
import {
  isAgenticFunction,
  serializeError,
  sessionContext,
  type AgenticFunction,
  type Runtime,
  type SessionNode,
} from "@openprogram/session-context";
import { createScriptedAsker } from "@openprogram/session-context/host";
import { createRuntime } from "@openprogram/session-context/runtime";
import { SessionDB } from "@openprogram/session-context/store";
import {
  removeTree,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeReplyHandler,
} from "@openprogram/session-context/testing";

/**
 * The entries the suite compares; "in-process" is the reference. "research-context" runs the program in code
 * inside the context the research harness installs (runResearch's options: the `research` id prefix and source).
 */
export type EntryName = "in-process" | "cli" | "dispatcher" | "child-process" | "research-context";
export const ENTRIES: EntryName[] = ["in-process", "cli", "dispatcher", "child-process"];

export const MODEL = "parity-model";
export const REFERENCE_PROGRAM = fileURLToPath(new URL("../programs/reference.mjs", import.meta.url));

/** One turn: which export of the reference program (or of `program`), with what input and answers. */
export interface Step {
  exportName: string;
  input: Record<string, unknown>;
  answers: string[];
  /** The module holding the export (default REFERENCE_PROGRAM). */
  program?: string;
}

/** The reference trip: a plan with one answer, then a refinement in the same session. */
export const TRIP_STEPS: Step[] = [
  { exportName: "planTrip", input: { destination: "Lisbon", days: 3 }, answers: ["comfort"] },
  { exportName: "refinePlan", input: { request: "Make day two cheaper." }, answers: [] },
];

/** Deterministic replies: the same request sequence gets the same answers in every entry. */
export const tripReply = (
  request: { json: { messages?: Array<{ role: string; content: string }> } },
  index: number,
): string => {
  const last = [...(request.json.messages ?? [])].reverse().find((message) => message.role === "user")?.content ?? "";
  return `reply #${index + 1}: ${last.split("\n")[0]?.slice(0, 40) ?? ""}`;
};

/** What a step did, as the entry reported it. */
export interface StepOutcome {
  sessionId: string;
  created: boolean;
  result: unknown;
  /** The text each llm node streamed to the entry's client, by node id (entries that stream to a client). */
  streamed?: Record<string, string>;
}

/** A step's failure as its entry reported it: the same three fields everywhere (issue 17 §5). */
export interface ReportedFailure {
  code: string;
  name: string;
  message: string;
}

/** Thrown by every entry's runner when the step failed, carrying what that entry reported. */
export class StepFailure extends Error {
  constructor(readonly failure: ReportedFailure) {
    super(`step failed: [${failure.code}/${failure.name}] ${failure.message}`);
  }
}

/** In-process and child-process failures are the thrown errors themselves. */
function rethrowAsStepFailure(error: unknown): never {
  const { code, name, message } = serializeError(error);
  throw new StepFailure({ code, name, message });
}

/** Everything one entry recorded over a scenario. */
export interface EntryRun {
  entry: EntryName;
  outcomes: StepOutcome[];
  /** Raw request bodies the model received, in order. */
  bodies: string[];
  /** Every session's nodes, keyed by session id. */
  nodes: Map<string, SessionNode[]>;
  /** Every session's stored attachments (`workdir/attachments/`): file name -> SHA-256, keyed by session id. */
  attachments: Map<string, Record<string, string>>;
}

/** A fresh store and model server for one entry's run. */
export interface Workspace {
  home: string;
  root: string;
  db: SessionDB;
  server: FakeOpenAIServer;
  runtime: Runtime;
  /** Environment that points a process at this workspace (store and model). */
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** The runtime every in-process entry uses: the loopback model at `baseUrl`, no retries. */
export function parityRuntime(baseUrl: string): Runtime {
  return createRuntime({ provider: "openai", baseUrl, model: MODEL, maxRetries: 0 }) as Runtime;
}

/** The environment that points a CLI or child process at the store under `home` and the model at `baseUrl`. */
export function parityEnv(home: string, baseUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    LANG: "C.UTF-8",
    OPENPROGRAM_HOME: home,
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: baseUrl,
    OPENPROGRAM_MODEL: MODEL,
    OPENPROGRAM_MAX_RETRIES: "0",
  };
}

export async function createWorkspace(handler: FakeReplyHandler): Promise<Workspace> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-parity-"));
  const root = join(home, "sessions");
  const server = await startFakeOpenAIServer(handler);
  return {
    home,
    root,
    db: new SessionDB({ root }),
    server,
    runtime: parityRuntime(server.baseUrl),
    env: parityEnv(home, server.baseUrl),
    cleanup: async () => {
      await server.close();
      removeTree(home);
    },
  };
}

async function loadExport(
  exportName: string,
  program = REFERENCE_PROGRAM,
): Promise<AgenticFunction<Record<string, unknown>, unknown>> {
  const module = (await import(program)) as Record<string, unknown>;
  const fn = module[exportName];
  if (!isAgenticFunction(fn)) throw new Error(`${exportName} is not an agentic function of the reference program`);
  return fn;
}

/** Runs one step through `entry` in `workspace`. */
export async function runStep(
  entry: EntryName,
  workspace: Workspace,
  step: Step,
  sessionId: string | undefined,
): Promise<StepOutcome> {
  switch (entry) {
    case "in-process":
      return runInProcess(workspace, step, sessionId);
    case "cli":
      return runThroughCli(workspace, step, sessionId);
    case "dispatcher":
      return runThroughDispatcher(workspace, step, sessionId);
    case "child-process":
      return runThroughChild(workspace, step, sessionId);
    case "research-context":
      return runInProcess(workspace, step, sessionId, { idPrefix: "research", source: "research" });
  }
}

async function runInProcess(
  workspace: Workspace,
  step: Step,
  sessionId: string | undefined,
  context: { idPrefix?: string; source: string } = { source: "test" },
): Promise<StepOutcome> {
  const fn = await loadExport(step.exportName, step.program);
  return sessionContext(
    {
      db: workspace.db,
      runtime: workspace.runtime,
      asker: createScriptedAsker(step.answers),
      ...context,
      ...(sessionId ? { sessionId } : {}),
    },
    async (session) => ({ sessionId: session.sessionId, created: session.created, result: await fn(step.input) }),
  ).catch(rethrowAsStepFailure);
}

async function runThroughChild(workspace: Workspace, step: Step, sessionId: string | undefined): Promise<StepOutcome> {
  // The parent has no runtime of its own: the child builds one from the environment, like any entry.
  return sessionContext(
    {
      db: workspace.db,
      runtime: null,
      asker: createScriptedAsker(step.answers),
      source: "test",
      ...(sessionId ? { sessionId } : {}),
    },
    async (session) => ({
      sessionId: session.sessionId,
      created: session.created,
      result: await runInChild({
        module: step.program ?? REFERENCE_PROGRAM,
        export: step.exportName,
        input: step.input,
        env: workspace.env,
      }).result,
    }),
  ).catch(rethrowAsStepFailure);
}

async function runThroughCli(workspace: Workspace, step: Step, sessionId: string | undefined): Promise<StepOutcome> {
  const answers = join(workspace.home, `answers-${Date.now()}-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(answers, JSON.stringify(step.answers));
  const args = [
    "run",
    `${step.program ?? REFERENCE_PROGRAM}#${step.exportName}`,
    "--input",
    JSON.stringify(step.input),
    "--answers",
    answers,
    "--json",
  ];
  if (sessionId) args.push("--session", sessionId);
  const { code, stdout, stderr } = await runCli(args, { env: workspace.env });
  const parsed = (() => {
    try {
      return JSON.parse(stdout) as { session_id: string; created: boolean; result: unknown; error?: ReportedFailure };
    } catch {
      throw new Error(`openprogram run exited ${code} without its --json line:\n${stderr}\n${stdout}`);
    }
  })();
  if (parsed.error) throw new StepFailure(parsed.error);
  return { sessionId: parsed.session_id, created: parsed.created, result: parsed.result };
}

/** Runs the built `openprogram` binary with `--json` output and parses it; a non-zero exit is an error with its output. */
export async function runCliJson<T>(
  args: string[],
  options: { env: Record<string, string>; cwd?: string },
): Promise<T> {
  const { code, stdout, stderr } = await runCli(args, options);
  if (code !== 0) throw new Error(`openprogram ${args[0] ?? ""} exited ${code}:\n${stderr}\n${stdout}`);
  return JSON.parse(stdout) as T;
}

/** What a turn over the WebSocket reported. */
export interface SocketTurn {
  sessionId: string;
  created: boolean;
  result: unknown;
  /** The delta frames' text, joined per llm node id. */
  streamed: Record<string, string>;
}

/**
 * One turn over a real WebSocket, as the web page does it: sends `frame`,
 * answers each question with the next of `answers` (declining when none is
 * left), and resolves on turn_done; turn_failed or an error frame rejects.
 */
export async function turnOverWebSocket(
  dispatcher: Dispatcher,
  frame: Record<string, unknown>,
  answers: readonly string[],
): Promise<SocketTurn> {
  const client = await TestClient.connect(dispatcher.wsUrl, { headers: { origin: dispatcher.url } });
  try {
    const remaining = [...answers];
    client.send(frame);
    const announced = await client.next(["session", "turn_failed", "error"]);
    if (announced.type !== "session") throw new Error(`dispatcher: ${JSON.stringify(announced)}`);
    for (;;) {
      const received = await client.next(["question", "turn_done", "turn_failed", "error"]);
      if (received.type === "question") {
        const value = remaining.shift();
        client.send(
          value === undefined
            ? { type: "decline", question_id: received.question_id }
            : { type: "answer", question_id: received.question_id, value },
        );
      } else if (received.type === "turn_done") {
        const streamed: Record<string, string> = {};
        for (const frame of client.frames)
          if (frame.type === "delta") streamed[frame.node_id] = client.deltaText(frame.node_id);
        return { sessionId: announced.session_id, created: announced.created, result: received.result, streamed };
      } else if (received.type === "turn_failed") throw new StepFailure(received.error as ReportedFailure);
      else throw new Error(`dispatcher: ${JSON.stringify(received)}`);
    }
  } finally {
    client.close();
  }
}

async function runThroughDispatcher(
  workspace: Workspace,
  step: Step,
  sessionId: string | undefined,
): Promise<StepOutcome> {
  const fn = await loadExport(step.exportName, step.program);
  const dispatcher = await createDispatcher({
    db: workspace.db,
    runtime: workspace.runtime,
    port: 0,
    programs: { [fn.agentic.name]: fn },
  });
  try {
    return await turnOverWebSocket(
      dispatcher,
      { type: "run", program: fn.agentic.name, input: step.input, ...(sessionId ? { session_id: sessionId } : {}) },
      step.answers,
    );
  } finally {
    await dispatcher.close();
  }
}

/** The files of a session's attachments folder (none when it has none): name -> SHA-256 of the bytes. */
function storedAttachments(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((name) => [
        name,
        createHash("sha256")
          .update(readFileSync(join(dir, name)))
          .digest("hex"),
      ]),
  );
}

/** Runs `steps` through `entry`; each step after the first continues the first step's session. */
export async function runScenario(entry: EntryName, steps: Step[], handler: FakeReplyHandler): Promise<EntryRun> {
  const workspace = await createWorkspace(handler);
  try {
    const outcomes: StepOutcome[] = [];
    for (const step of steps) outcomes.push(await runStep(entry, workspace, step, outcomes[0]?.sessionId));
    const nodes = new Map<string, SessionNode[]>();
    const attachments = new Map<string, Record<string, string>>();
    for (const { sessionId } of outcomes) {
      nodes.set(sessionId, await new SessionDB({ root: workspace.root }).loadNodes(sessionId));
      attachments.set(sessionId, storedAttachments(join(workspace.root, sessionId, "workdir", "attachments")));
    }
    return { entry, outcomes, bodies: workspace.server.requests.map((request) => request.body), nodes, attachments };
  } finally {
    await workspace.cleanup();
  }
}
