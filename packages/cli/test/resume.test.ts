// `openprogram resume`, `openprogram answer` and a research run continued
// with --session (issue 14): the real binary against a real HTTP server
// speaking the chat-completions protocol.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, askUser, sessionContext, type Asker, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { describeTurn } from "@openprogram/session-context/turns";
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type ReceivedRequest,
} from "@openprogram/session-context/testing";
import { createCliHome, program, runCli, sessionIdFrom, waitFor, type CliHome } from "./helpers/cli.js";
import { runCliInPty } from "./helpers/pty.js";

const DEMO_REPLIES = JSON.parse(
  readFileSync(new URL("../../research/demo/replies.json", import.meta.url), "utf8"),
) as Array<{ when: { system: string; content?: string }; reply: string }>;

let home: CliHome;
let server: FakeOpenAIServer;
/** Request indexes (0-based, counted per test) answered with HTTP 500. */
let failing: Set<number>;
/** While set, model requests wait for it. */
let gate: Promise<void> | null = null;

beforeAll(() => {
  home = createCliHome();
});
afterAll(() => home.cleanup());
beforeEach(async () => {
  failing = new Set();
  gate = null;
  server = await startFakeOpenAIServer(async (request, index) => {
    if (gate) await gate;
    if (failing.has(index)) return { status: 500, message: `request ${index} fails` };
    return replyTo(request);
  });
});
afterEach(() => server.close());

/** The research stages' canned replies (matched by doc and content), or an echo for other programs. */
function replyTo(request: ReceivedRequest): string {
  const messages = request.json.messages ?? [];
  const system = messages.find((message) => message.role === "system")?.content ?? "";
  const last = [...messages].reverse().find((message) => message.role === "user")?.content ?? "";
  const canned = DEMO_REPLIES.find(
    (entry) =>
      system.includes(entry.when.system) && (entry.when.content === undefined || last.includes(entry.when.content)),
  );
  return canned?.reply ?? `reply to ${last.split("\n")[0] ?? ""} (${messages.length} messages)`;
}

function env(): Record<string, string> {
  return home.env({
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: server.baseUrl,
    OPENPROGRAM_MODEL: "m",
    OPENPROGRAM_MAX_RETRIES: "0",
  });
}

function bodies(): string[] {
  return server.requests.map((request) => request.body);
}

const TRIP = ["run", `${program("trip.mjs")}#planTrip`, "--input", JSON.stringify({ destination: "Lisbon", days: 3 })];

describe("openprogram resume", () => {
  it("continues a failed run where it stopped: no request repeated but the failed one, the same result", async () => {
    const answers = home.file("comfort.txt", "comfort\n");
    const reference = await runCli([...TRIP, "--answers", answers], { env: env() });
    expect(reference.code).toBe(0);
    const referenceBodies = bodies();
    server.requests.length = 0;

    failing = new Set([1]);
    const failed = await runCli([...TRIP, "--answers", answers], { env: env() });
    expect(failed.code).toBe(1);
    const sessionId = sessionIdFrom(failed.stderr);
    // The model failed, not the program: resume is suggested, saying what it will not run (and pay for) again.
    expect(failed.stderr).toContain(
      `stopped: \`openprogram resume ${sessionId}\` continues the turn where it stopped (the 3 steps that finished come from the record, not run again)`,
    );
    failing = new Set();

    const resumed = await runCli(["resume", sessionId], { env: env() });
    expect(resumed.stderr).not.toContain("error [");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe(reference.stdout);
    expect(resumed.stderr.trimEnd().split("\n").at(-1)).toBe(
      `session: ${sessionId} (--session ${sessionId} to continue)`,
    );
    expect(bodies()).toEqual([referenceBodies[0], referenceBodies[1], referenceBodies[1], referenceBodies[2]]);

    const again = await runCli(["resume", sessionId, "--json"], { env: env() });
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: false, error: { code: "nothing_to_resume" } });
  });

  it("--json says which turn continued which; a failure inside the resume keeps the session resumable", async () => {
    const answers = home.file("luxury.txt", "luxury\n");
    failing = new Set([0]);
    const failed = await runCli([...TRIP, "--answers", answers], { env: env() });
    const sessionId = sessionIdFrom(failed.stderr);
    const firstTurn = describeTurn({ sessionId, db: home.db }).turnId;
    failing = new Set([1]);
    const failedAgain = await runCli(["resume", sessionId, "--json"], { env: env() });
    expect(failedAgain.code).toBe(1);
    expect(JSON.parse(failedAgain.stdout)).toMatchObject({ ok: false, error: { code: "provider_error" } });
    failing = new Set();
    const resumed = await runCli(["resume", sessionId, "--json"], { env: env() });
    expect(resumed.code).toBe(0);
    const json = JSON.parse(resumed.stdout) as { turn_id: string; resumed_turn_id: string; result: string };
    expect(json).toMatchObject({ ok: true, session_id: sessionId, created: false });
    expect(json.resumed_turn_id).not.toBe(firstTurn);
    expect(json.turn_id).not.toBe(json.resumed_turn_id);
    expect(json.result).toMatch(/^reply to Destination: Lisbon/);
  });

  it("refuses a bad request with exit 2, naming what is wrong, and writes nothing", async () => {
    const unknown = await runCli(["resume", "no_such_session"], { env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^error \[session_not_found\]/m);

    const answers = home.file("budget.txt", "budget\n");
    const done = await runCli([...TRIP, "--answers", answers], { env: env() });
    const sessionId = sessionIdFrom(done.stderr);
    const commits = (await home.db.gitLog(sessionId)).length;
    const finished = await runCli(["resume", sessionId], { env: env() });
    expect(finished.code).toBe(2);
    expect(finished.stderr).toMatch(/^error \[nothing_to_resume\]: .*finished and waits for no answer/m);
    const noTurn = await runCli(["resume", sessionId, "--turn", "turn_0000000000"], { env: env() });
    expect(noTurn.code).toBe(2);
    expect(noTurn.stderr).toMatch(/^error \[turn_not_found\]: Session '.*' has no turn 'turn_0000000000'/m);
    const noQuestion = await runCli(["answer", sessionId, "red"], { env: env() });
    expect(noQuestion.code).toBe(2);
    expect(noQuestion.stderr).toMatch(/^error \[no_pending_question\]/m);
    expect((await home.db.gitLog(sessionId)).length).toBe(commits);
  });

  it("of two resumes of one turn at once, one continues it and the other exits 75 (session busy)", async () => {
    const answers = home.file("comfort2.txt", "comfort\n");
    failing = new Set([0]);
    const failed = await runCli([...TRIP, "--answers", answers], { env: env() });
    const sessionId = sessionIdFrom(failed.stderr);
    failing = new Set();
    // The winner's model requests wait until the other command has ended, so the two always overlap.
    let release = (): void => undefined;
    gate = new Promise<void>((resolve) => (release = resolve));
    const runs = [
      runCli(["resume", sessionId], { env: env() }),
      runCli(["resume", sessionId], { env: env() }),
    ] as const;
    void Promise.race(runs).then(release, release);
    const [first, second] = await Promise.all(runs);
    gate = null;
    expect([first.code, second.code].sort()).toEqual([0, 75]);
    const loser = first.code === 75 ? first : second;
    expect(loser.stderr).toMatch(/^error \[session_busy\]: Session '.*' is busy: turn turn_[0-9a-f]{10} is/m);
    // The winner's requests only: three, none twice.
    expect(new Set(bodies().slice(1)).size).toBe(3);
    expect(bodies()).toHaveLength(4);
  });
});

describe("openprogram answer", () => {
  it("answers a question left waiting by Ctrl-C and runs the turn to completion in this process", async () => {
    const asked = await runCliInPty(["run", program("ask-choice.mjs")], {
      env: env(),
      dir: home.home,
      steps: [{ expect: "Choose a number", send: "\u0003" }],
    });
    expect(asked.exit_code).toBe(130);
    const sessionId = sessionIdFrom(asked.output.replace(/\r/g, ""));
    expect(asked.output).toContain(`\`openprogram answer ${sessionId} <answer>\` continues the turn`);
    expect((await home.db.getSession(sessionId))?.status).toBe("needs_input");

    const noAnswer = await runCli(["resume", sessionId], { env: env() });
    expect(noAnswer.code).toBe(2);
    expect(noAnswer.stderr).toMatch(/^error \[answer_required\]: .*Which colour should the chart use\?/m);
    const wrong = await runCli(["answer", sessionId, "purple"], { env: env() });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error \[invalid_answer\]: "purple" is not one of the choices/m);

    const answered = await runCli(["answer", sessionId, "2"], { env: env() });
    expect(answered.stderr).not.toContain("error [");
    expect(answered.code).toBe(0);
    expect(answered.stdout).toBe("chart in green\n");
    const nodes = await home.db.loadNodes(sessionId);
    expect(nodes.filter((node) => node.name === "ask_user").map((node) => [node.metadata.status, node.output])).toEqual(
      [["answered", "green"]],
    );
    expect((await home.db.getSession(sessionId))?.status).toBe("idle");
  });

  it("while the asking process still waits, the answer goes to it and no second run starts", async () => {
    const runtime = createRuntime({
      provider: "openai",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    }) as Runtime;
    const waiting: Asker = {
      ask: (_request, { signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(new Error("the question stopped waiting")), { once: true }),
        ),
    };
    const pick = agenticFunction({ name: "pick_colour", doc: "Ask which colour to use." }, async () => {
      const colour = await askUser("Which colour should the chart use?", { choices: ["red", "green", "blue"] });
      return `chart in ${colour}`;
    });
    const owner = sessionContext(
      { sessionId: "asked_here", db: home.db, runtime, asker: waiting, program: { ref: "test:pick" } },
      () => pick({}),
    );
    await waitFor(() => {
      try {
        return describeTurn({ sessionId: "asked_here", db: home.db }).question !== null;
      } catch {
        return false;
      }
    }, "the question");
    const answered = await runCli(["answer", "asked_here", "blue", "--json"], { env: env() });
    expect(answered.code).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({
      ok: true,
      session_id: "asked_here",
      answer: "blue",
      delivered_to: "live_process",
    });
    await expect(owner).resolves.toBe("chart in blue");
  });
});

describe("openprogram research --session on a failed run", () => {
  it("continues from the failed stage; the work dir ends as an uninterrupted run's", async () => {
    const referenceDir = join(home.home, "reference-paper");
    const reference = await runCli(["research", "agent reliability", "--work-dir", referenceDir], { env: env() });
    expect(reference.code).toBe(0);
    const referenceBodies = bodies();
    expect(referenceBodies.length).toBeGreaterThanOrEqual(10);
    server.requests.length = 0;

    const workDir = join(home.home, "paper");
    const args = ["research", "agent reliability", "--session", "research_failed", "--work-dir", workDir];
    failing = new Set([8]);
    const failed = await runCli(args, { env: env() });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^error \[provider_error\]/m);
    failing = new Set();
    const continued = await runCli(args, { env: env() });
    expect(continued.stderr).not.toContain("error [");
    expect(continued.code).toBe(0);
    expect(continued.stdout.replaceAll(workDir, "<dir>")).toBe(reference.stdout.replaceAll(referenceDir, "<dir>"));
    // Stages before the failure were not run again: every request went once but the one that failed.
    expect(bodies()).toEqual([...referenceBodies.slice(0, 9), ...referenceBodies.slice(8)]);
    expect(files(workDir)).toEqual(files(referenceDir));
    const tops = (await home.db.loadNodes("research_failed")).filter((node) => node.caller === "");
    expect(tops.map((node) => [node.name, node.metadata.status])).toEqual([
      ["research_agent", "failed"],
      ["research_agent", "completed"],
    ]);
  });
});

/** Every file under `dir` with its content, by relative path. */
function files(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const entry of readdirSync(current)) {
      const path = join(current, entry);
      if (statSync(path).isDirectory()) walk(path);
      else found[relative(dir, path)] = readFileSync(path, "utf8");
    }
  };
  if (existsSync(dir)) walk(dir);
  return found;
}
