// Durable tool calls (issue 32, Durable): kill -9 a CLI run of a program whose
// model calls tools (an idempotent lookup, a booking that needs approval, an
// agentic function) inside a tool, inside the approval wait, between a tool's
// end and the next model request, and at random points; then `openprogram
// resume` (or `openprogram answer`). Against a real loopback model server that
// logs every request body: the run continues to the uninterrupted run's
// result; no tool that finished runs again, a plain tool the kill landed in
// runs again only when idempotent (the booking never twice); no request is
// sent twice but, at most once, the one in flight at the kill; the store is
// consistent and `openprogram sessions doctor` clean.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CLI_BIN, collect, runCli, spawnCli, type CliResult } from "@openprogram/cli/testing";
import type { SessionNode } from "@openprogram/session-context";
import { SessionDB } from "@openprogram/session-context/store";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_DAY_REQUESTS, toolDayModel } from "../../../packages/cli/test/helpers/tool-day-model.js";
import {
  assertConsistentAfterKill,
  createKillHome,
  killAfter,
  spreadKillDelays,
  startKillable,
  type KillableRun,
} from "./helpers/kill.js";

const PROGRAM = fileURLToPath(new URL("../../../packages/cli/test/programs/tool-day.mjs", import.meta.url));
// Replies take a while, so that random kills land inside model requests too. Each kill costs a killed
// CLI run, a resume and a doctor run (4-6 s on a loaded 2-core machine): each test below stays well
// under half its 120 s timeout.
const REPLY_DELAY_MS = 40;
const RANDOM_KILLS = 6;

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer(toolDayModel(REPLY_DELAY_MS));
});
afterAll(async () => {
  await server.close();
});

const killHome = createKillHome("openprogram-tool-kill-", {});
afterAll(() => killHome.cleanup());
const YES = join(killHome.home, "yes.json");
writeFileSync(YES, JSON.stringify(["yes"]));

const logOf = (sessionId: string): string => join(killHome.home, `${sessionId}.tools.log`);
const env = (sessionId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  ...killHome.env,
  OPENPROGRAM_PROVIDER: "openai",
  OPENAI_BASE_URL: server.baseUrl,
  OPENPROGRAM_MODEL: "tool-kill-model",
  OPENPROGRAM_MAX_RETRIES: "0",
  OPENPROGRAM_TEST_TOOL_LOG: logOf(sessionId),
  ...extra,
});
const runArgs = (sessionId: string, ...more: string[]): string[] => [
  "run",
  `${PROGRAM}#planDay`,
  "--input",
  JSON.stringify({ city: "Oslo" }),
  "--session",
  sessionId,
  "--json",
  ...more,
];

/** The tools a session executed, in order, across every process. */
function executions(sessionId: string): string[] {
  try {
    return readFileSync(logOf(sessionId), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}
const count = (sessionId: string, name: string): number =>
  executions(sessionId).filter((entry) => entry === name).length;
const bodiesSince = (from: number): string[] => server.requests.slice(from).map((request) => request.body);
const resultOf = (run: CliResult): unknown =>
  (JSON.parse(run.stdout.trimEnd().split("\n").at(-1) ?? "") as { result: unknown }).result;

async function nodesOf(sessionId: string): Promise<SessionNode[]> {
  const db = new SessionDB({ root: killHome.root });
  return (await db.getSession(sessionId)) === null ? [] : db.loadNodes(sessionId);
}

/** An uninterrupted run: its result and requests, and how long it took. */
async function reference(): Promise<{ result: unknown; bodies: string[]; runMs: number }> {
  const from = server.requests.length;
  const started = Date.now();
  const run = await startKillable(runArgs("reference", "--answers", YES), env("reference")).exited;
  const runMs = Date.now() - started;
  expect(run.code, run.stderr).toBe(0);
  expect(executions("reference")).toEqual(["weather", "book_room", "shout"]);
  const bodies = bodiesSince(from);
  expect(bodies).toHaveLength(TOOL_DAY_REQUESTS);
  return { result: resultOf(run), bodies, runMs };
}
let ref: { result: unknown; bodies: string[]; runMs: number };
beforeAll(async () => {
  ref = await reference();
}, 60_000);

/** What happened to one killed run. */
type KillOutcome = "resumed" | "finished before the kill" | "nothing recorded";

/**
 * Continues a killed run (resume, or the run again when it recorded nothing) and checks it: the result is the
 * uninterrupted run's (or, when the booking was interrupted, the model was told so); plain tools ran at most as
 * the contract says; no request went twice but the one in flight; the store is whole.
 */
async function continueAndCheck(sessionId: string, from: number, what: string): Promise<KillOutcome> {
  let outcome: KillOutcome;
  let result: unknown;
  const resumed = await runCli(["resume", sessionId, "--program", PROGRAM, "--answers", YES, "--json"], {
    env: env(sessionId),
  });
  if (resumed.code === 0) {
    outcome = "resumed";
    result = resultOf(resumed);
  } else {
    expect(JSON.parse(resumed.stdout) as unknown, `${what}: ${resumed.stderr}`).toMatchObject({
      error: { code: expect.stringMatching(/^(nothing_to_resume|session_not_found)$/) as unknown },
    });
    const finished = (await nodesOf(sessionId)).filter(
      (node) => node.caller === "" && node.name === "plan_day" && node.metadata.status === "completed",
    );
    if (finished.length > 0) {
      outcome = "finished before the kill";
      result = finished.at(-1)?.output;
    } else {
      outcome = "nothing recorded";
      expect(bodiesSince(from), `${what}: a run that recorded no turn sent no request`).toEqual([]);
      const again = await runCli(runArgs(sessionId, "--answers", YES), { env: env(sessionId) });
      expect(again.code, again.stderr).toBe(0);
      result = resultOf(again);
    }
  }
  const nodes = await nodesOf(sessionId);
  const toolNodes = (name: string): SessionNode[] => nodes.filter((node) => node.name === name && node.caller !== "");
  const interrupted = (name: string): number =>
    toolNodes(name).filter((node) => node.metadata.status === "interrupted").length;
  // The booking, not idempotent, never runs twice; the idempotent lookup runs again only after a kill inside it.
  expect(count(sessionId, "book_room"), `${what}: the booking ran at most once`).toBeLessThanOrEqual(1);
  expect(count(sessionId, "weather"), `${what}: the lookup`).toBeLessThanOrEqual(1 + interrupted("weather"));
  const bookingInterrupted = toolNodes("book_room").some(
    (node) => (node.metadata.error as { code?: string } | undefined)?.code === "tool_interrupted",
  );
  const bodies = bodiesSince(from);
  const counts = new Map<string, number>();
  for (const body of bodies) counts.set(body, (counts.get(body) ?? 0) + 1);
  const repeated = [...counts.values()].filter((times) => times > 1);
  expect(repeated.length <= 1 && repeated.every((times) => times === 2), `${what}: repeats ${repeated.join(",")}`).toBe(
    true,
  );
  if (bookingInterrupted) {
    // Killed after the booking's node was written and before its result: the model heard its effect is unknown.
    expect(toolNodes("book_room").map((node) => node.metadata.status)).toEqual(["interrupted", "failed"]);
    expect(bodies.slice(0, 2)).toEqual(ref.bodies.slice(0, 2));
  } else {
    expect(JSON.stringify(result), `${what}: the result`).toBe(JSON.stringify(ref.result));
    expect([...counts.keys()].sort(), `${what}: the requests are the uninterrupted run's`).toEqual(
      [...ref.bodies].sort(),
    );
  }
  await assertConsistentAfterKill(killHome.root, sessionId);
  const doctor = await runCli(["sessions", "doctor", sessionId, "--json"], { env: env(sessionId) });
  const report = JSON.parse(doctor.stdout) as { healthy: boolean; findings: Array<{ kind: string }> };
  expect(report.healthy, `${what}: doctor: ${doctor.stdout}`).toBe(true);
  expect(
    report.findings.filter(
      (finding) => !(outcome === "finished before the kill" && finding.kind === "uncommitted_tail"),
    ),
    `${what}: doctor`,
  ).toEqual([]);
  return outcome;
}

/** Starts a run that prints its events and is killed once it printed a line matching `when`. */
function killOnEvent(sessionId: string, when: (event: Record<string, unknown>) => boolean): Promise<CliResult> {
  const child = spawnCli([...runArgs(sessionId, "--answers", YES), "--events"], { env: env(sessionId) });
  child.stdin.end();
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines)
      if (line.startsWith("{") && when(JSON.parse(line) as Record<string, unknown>)) child.kill("SIGKILL");
  });
  return collect(child);
}

describe("kill -9 of a CLI run that calls tools, then openprogram resume", () => {
  it(
    "killed inside each tool: only the idempotent one runs again, the agentic one replays its request",
    { timeout: 120_000 },
    async () => {
      for (const tool of ["weather", "book_room", "shout"]) {
        const sessionId = `in_${tool}`;
        const from = server.requests.length;
        const killed = await startKillable(
          runArgs(sessionId, "--answers", YES),
          env(sessionId, { OPENPROGRAM_TEST_DIE_IN: tool }),
        ).exited;
        expect(killed.signal, killed.stderr).toBe("SIGKILL");
        expect(await continueAndCheck(sessionId, from, `killed in ${tool}`)).toBe("resumed");
        const expected = { weather: [2, 1], book_room: [1, 1], shout: [1, 1] }[tool] as [number, number];
        expect([count(sessionId, "weather"), count(sessionId, "book_room")], tool).toEqual(expected);
        const runs = (await nodesOf(sessionId)).filter((node) => node.name === tool);
        expect(
          runs.map((node) => node.metadata.status),
          tool,
        ).toEqual(tool === "book_room" ? ["interrupted", "failed"] : ["interrupted", "completed"]);
      }
    },
  );

  it("killed between a tool's end and the next model request: nothing runs again", { timeout: 120_000 }, async () => {
    for (const tool of ["weather", "book_room", "shout"]) {
      const sessionId = `after_${tool}`;
      const from = server.requests.length;
      const killed = await killOnEvent(sessionId, (event) => event.type === "tool_result" && event.name === tool);
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      expect(await continueAndCheck(sessionId, from, `killed after ${tool}`)).toBe("resumed");
      expect(
        executions(sessionId).filter((name) => name !== "shout"),
        tool,
      ).toEqual(["weather", "book_room"]);
    }
  });

  it.each(["resume --answers", "answer"])(
    "killed while the approval waits on a terminal, then openprogram %s: the booking runs once",
    { timeout: 120_000 },
    async (how) => {
      const sessionId = `approval_${how.split(" ")[0] ?? ""}`;
      const from = server.requests.length;
      const killed = await killInApprovalWait(sessionId);
      expect(killed.pidKilled).toBe(true);
      expect(executions(sessionId)).toEqual(["weather"]);
      if (how === "answer") {
        const answered = await runCli(["answer", sessionId, "yes", "--program", PROGRAM, "--json"], {
          env: env(sessionId),
        });
        expect(answered.code, answered.stderr).toBe(0);
        expect(JSON.stringify(resultOf(answered))).toBe(JSON.stringify(ref.result));
      }
      expect(await continueAndCheck(sessionId, from, `killed in the approval (${how})`)).toBe(
        how === "answer" ? "finished before the kill" : "resumed",
      );
      expect(executions(sessionId)).toEqual(["weather", "book_room", "shout"]);
      const asks = (await nodesOf(sessionId)).filter((node) => node.name === "ask_user");
      expect(asks.map((node) => [node.metadata.status, node.output])).toEqual([["answered", "yes"]]);
    },
  );

  it(`continues each of ${RANDOM_KILLS} runs killed at random points`, { timeout: 120_000 }, async () => {
    const delays = spreadKillDelays(RANDOM_KILLS, ref.runMs, 0.5, 0.98);
    const outcomes: KillOutcome[] = [];
    for (const [index, delay] of delays.entries()) {
      const sessionId = `random_${index}`;
      const from = server.requests.length;
      const run: KillableRun = startKillable(runArgs(sessionId, "--answers", YES), env(sessionId));
      await killAfter(run, delay);
      outcomes.push(await continueAndCheck(sessionId, from, `kill ${index} at ${delay} ms`));
    }
    process.stdout.write(`tool kills at ${delays.join(", ")} ms of a ${ref.runMs} ms run: ${outcomes.join(", ")}\n`);
  });
});

/**
 * Runs the program on a terminal (script(1) gives it one, so the booking's approval waits for the user), and
 * SIGKILLs the CLI process once the question shows. Resolves once the terminal is gone.
 */
async function killInApprovalWait(sessionId: string): Promise<{ pidKilled: boolean; output: string }> {
  const command = `echo "pid $$"; exec "${process.execPath}" "${CLI_BIN}" ${runArgs(sessionId)
    .map((arg) => `'${arg}'`)
    .join(" ")}`;
  const terminal = spawn("script", ["-qec", command, "/dev/null"], {
    env: { ...env(sessionId), TERM: "dumb" },
    stdio: "pipe",
    detached: true,
  });
  let output = "";
  let pidKilled = false;
  const done = new Promise<void>((resolve) => terminal.on("close", () => resolve()));
  terminal.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString();
    const pid = /pid (\d+)/.exec(output)?.[1];
    if (!pidKilled && pid !== undefined && output.includes("Allow the tool book_room")) {
      process.kill(Number(pid), "SIGKILL");
      pidKilled = true;
    }
  });
  const timer = setTimeout(() => terminal.kill("SIGKILL"), 60_000);
  await done;
  clearTimeout(timer);
  return { pidKilled, output };
}
