// A question asked through the web outlives `openprogram serve` (issue 14):
// the real binary serves a program, is stopped with SIGTERM while the turn
// waits for an answer, is started again on the same store, and
// `openprogram answer` finishes the turn; the web sees the result. A real
// HTTP server speaking the chat-completions protocol counts the requests.
import type { ServerFrame } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createCliHome,
  program,
  runCli,
  startServe,
  stopCliProcesses,
  waitFor,
  type CliHome,
  type ServeProcess,
} from "./helpers/cli.js";

type Json = Record<string, unknown> & { event?: string };

let home: CliHome;
let server: FakeOpenAIServer;
beforeAll(() => {
  home = createCliHome();
});
afterAll(() => home.cleanup());
/** Request indexes (0-based, per test) answered with HTTP 500. */
let failing: Set<number>;
/** While set, replies wait for it: a resume then stays running while another one asks. */
let gate: Promise<void> | null;
beforeEach(async () => {
  failing = new Set();
  gate = null;
  server = await startFakeOpenAIServer(async (request, index) => {
    if (gate) await gate;
    if (failing.has(index)) return { status: 500, message: `request ${index} fails` };
    const last = request.json.messages?.at(-1)?.content ?? "";
    return last.startsWith("Suggest") ? "Lisbon" : `a plan for: ${last}`;
  });
});
afterEach(async () => {
  await stopCliProcesses();
  await server.close();
});

function env(): Record<string, string> {
  return home.env({
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: server.baseUrl,
    OPENPROGRAM_MODEL: "m",
    OPENPROGRAM_MAX_RETRIES: "0",
  });
}

const PROGRAM = `${program("pick-destination.mjs")}#pickDestination`;

/** `openprogram serve --program ...` on a free port, once it serves. */
function serveProgram(extra: string[] = []): Promise<ServeProcess> {
  // A long grace period: a turn waiting for an answer must be suspended at once, not after it.
  return startServe(["--grace-ms", "60000", "--program", PROGRAM, ...extra], { env: env() });
}

function asType<T extends ServerFrame["type"]>(frame: ServerFrame, type: T): Extract<ServerFrame, { type: T }> {
  expect(frame.type === "error" ? `error ${frame.code}: ${frame.message}` : frame.type).toBe(type);
  return frame as Extract<ServerFrame, { type: T }>;
}

describe("a question asked through openprogram serve outlives it", () => {
  it.each([
    ["in the server's process", []],
    ["in a child process (--isolate)", ["--isolate"]],
  ])(
    "SIGTERM while the turn waits %s, a restart, `openprogram answer` from the CLI: the turn completes and the web sees the result",
    async (_where, extra: string[]) => {
      const first = await serveProgram(extra);
      const asking = await TestClient.connect(first.wsUrl);
      asking.send({ type: "run", program: "pick_destination", input: { region: "Portugal" } });
      const session = asType(await asking.next(["session", "error"]), "session");
      const sessionId = session.session_id;
      const question = await asking.next("question");
      expect(question.question).toBe("Which style of trip to Lisbon?");

      process.kill(first.child.pid as number, "SIGTERM");
      const stopped = await first.run;
      expect(stopped.code).toBe(0);
      expect((await asking.next("turn_failed")).error.code).toBe("cancelled");
      expect((await asking.waitClosed()).code).toBe(1001);
      const log = stopped.stdout
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Json);
      expect(log.find((entry) => entry.event === "turns_suspended")).toMatchObject({ count: 1 });
      expect(log.some((entry) => entry.event === "turns_cancelled")).toBe(false);
      const waiting = (await home.db.loadNodes(sessionId)).find((node) => node.name === "ask_user");
      expect(waiting).toMatchObject({ id: question.question_id, metadata: { status: "waiting" } });
      expect((await home.db.getSession(sessionId))?.status).toBe("needs_input");

      // Started again on the same store: the page (any subscriber) is shown the question.
      const second = await serveProgram(extra);
      const watching = await TestClient.connect(second.wsUrl);
      watching.send({ type: "subscribe", session_id: sessionId });
      expect(asType(await watching.next(["subscribed", "error"]), "subscribed").status).toBe("needs_input");
      expect(await watching.next("question")).toMatchObject({
        question_id: question.question_id,
        question: "Which style of trip to Lisbon?",
        choices: ["budget", "comfort"],
      });

      const answered = await runCli(["answer", sessionId, "2", "--json"], { env: env() });
      expect(answered.stderr).not.toContain("error [");
      expect(answered.code).toBe(0);
      const expected = { destination: "Lisbon", style: "comfort", plan: "a plan for: Plan a comfort trip to Lisbon." };
      expect(JSON.parse(answered.stdout)).toMatchObject({
        ok: true,
        session_id: sessionId,
        resumed_turn_id: session.turn_id,
        result: expected,
      });
      // Each model request once across the three processes: the first call was replayed, not sent again.
      const bodies = server.requests.map((request) => request.body);
      expect(bodies).toHaveLength(2);
      expect(new Set(bodies).size).toBe(2);

      // The web sees the result: the session as the page loads it.
      watching.send({ type: "get_session", session_id: sessionId });
      const detail = asType(await watching.next(["session_detail", "error"]), "session_detail");
      const tops = detail.nodes.filter((node) => node.name === "pick_destination");
      expect(tops.map((node) => node.metadata.status)).toEqual(["cancelled", "completed"]);
      expect(tops[1]?.output).toEqual(expected);
      expect(detail.nodes.find((node) => node.name === "ask_user")).toMatchObject({
        output: "comfort",
        metadata: { status: "answered" },
      });
      expect(detail.session.status).toBe("idle");
      expect(detail.resumable).toBeNull();
      watching.close();
      process.kill(second.child.pid as number, "SIGTERM");
      expect((await second.run).code).toBe(0);

      const doctor = await runCli(["sessions", "doctor", sessionId], { env: env() });
      expect(doctor.stdout + doctor.stderr).not.toMatch(/error|warn/i);
      expect(doctor.code).toBe(0);
    },
  );
});

describe("two resumes of one web turn at once, from the web and from the CLI", () => {
  /** A web turn that failed at its first model request; the client that ran it. */
  async function failedTurn(served: { wsUrl: string }): Promise<{ client: TestClient; sessionId: string }> {
    const client = await TestClient.connect(served.wsUrl);
    const first = server.requests.length;
    failing.add(first);
    client.send({ type: "run", program: "pick_destination", input: { region: "Portugal" } });
    const session = asType(await client.next(["session", "error"]), "session");
    expect((await client.next("turn_failed")).error.code).toBe("provider_error");
    return { client, sessionId: session.session_id };
  }

  /** Runs the web's turn to its end, answering its question; returns how it ended. */
  async function webTurnEnd(client: TestClient): Promise<string> {
    for (;;) {
      const frame = await client.next(["question", "turn_done", "turn_failed"]);
      if (frame.type === "question") client.send({ type: "answer", question_id: frame.question_id, value: "comfort" });
      else return frame.type === "turn_done" ? "done" : frame.error.code;
    }
  }

  it("the web's resume runs; `openprogram resume` meanwhile exits 75 (session_busy); then the CLI's runs and the web's is refused", async () => {
    const served = await serveProgram();
    const answers = home.file("comfort.txt", "comfort\n");

    // The web first: its resume holds the turn (its model request waits) while the CLI asks.
    const webFirst = await failedTurn(served);
    let open: () => void = () => undefined;
    gate = new Promise((resolve) => (open = resolve));
    const sent = server.requests.length;
    webFirst.client.send({ type: "resume", session_id: webFirst.sessionId });
    asType(await webFirst.client.next(["session", "error"]), "session");
    await waitFor(() => server.requests.length > sent, "the web's resume to send its request");
    const refused = await runCli(["resume", webFirst.sessionId, "--answers", answers, "--json"], { env: env() });
    expect(refused.code).toBe(75);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { code: "session_busy" } });
    open();
    expect(await webTurnEnd(webFirst.client)).toBe("done");

    // The CLI first: the web's resume meanwhile is refused before anything runs.
    const cliFirst = await failedTurn(served);
    gate = new Promise((resolve) => (open = resolve));
    const before = server.requests.length;
    const fromCli = runCli(["resume", cliFirst.sessionId, "--answers", answers, "--json"], { env: env() });
    await waitFor(() => server.requests.length > before, "the CLI's resume to send its request");
    const busy = await cliFirst.client.request({ type: "resume", session_id: cliFirst.sessionId }, "session");
    expect(busy).toMatchObject({ type: "error", code: "session_busy", action: "resume" });
    open();
    const resumed = await fromCli;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ ok: true, result: { style: "comfort" } });

    // In each session: the failed suggestion sent again once, by the winner, and the plan once.
    for (const sessionId of [webFirst.sessionId, cliFirst.sessionId]) {
      const tops = (await home.db.loadNodes(sessionId)).filter((node) => node.name === "pick_destination");
      expect(tops.map((node) => node.metadata.status)).toEqual(["failed", "completed"]);
    }
    const bodies = server.requests.map((request) => request.body);
    expect(bodies).toHaveLength(6);
    expect(new Set(bodies).size).toBe(2);
    webFirst.client.close();
    cliFirst.client.close();
  });
});
