// Durable turns (issue 14): kill -9 of `openprogram serve` while a web turn
// waits on a question, or at a random point around it; after a restart the
// turn is continued (the question answered from the web or with
// `openprogram answer`, or a `resume` frame) and ends with the result of an
// uninterrupted run. A real HTTP server speaking the chat-completions
// protocol logs every request: each distinct body is sent at most once, but
// the one in flight at the kill, which may be sent once more.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli, startServe, stopCliProcesses } from "@openprogram/cli/testing";
import type { ServerFrame } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { doctorSessions, SessionDB } from "@openprogram/session-context/store";
import { removeTree, startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PROGRAM = `${fileURLToPath(new URL("../programs/trip-question.mjs", import.meta.url))}#planTrip`;
const INPUT = { region: "Portugal" };
/**
 * Kill points: twice while the question waits (answered after the restart from the web, then with
 * `openprogram answer`), then random delays after the turn's first node.
 */
const KILLS: Array<"at_question" | number> = [
  "at_question",
  "at_question",
  ...Array.from({ length: 5 }, () => Math.random() * 700),
];

const home = mkdtempSync(join(tmpdir(), "openprogram-question-kill-"));
const root = join(home, "sessions");
let model: FakeOpenAIServer;
beforeAll(async () => {
  // Every reply takes a while, so that kills land during model requests as well as between them.
  model = await startFakeOpenAIServer((request) => {
    const last = request.json.messages?.at(-1)?.content ?? "";
    return { delayMs: 60, reply: `reply to ${last.split("\n")[0] ?? ""}` };
  });
});
afterAll(async () => {
  await stopCliProcesses();
  await model.close();
  removeTree(home);
});

function env(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    OPENPROGRAM_HOME: home,
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: model.baseUrl,
    OPENPROGRAM_MODEL: "m",
    OPENPROGRAM_MAX_RETRIES: "0",
  };
}

interface Served {
  kill(): Promise<void>;
  connect(): Promise<TestClient>;
}

async function startServer(): Promise<Served> {
  const served = await startServe(["--no-token", "--program", PROGRAM], { env: env() });
  const port = served.port;
  const clients: TestClient[] = [];
  return {
    kill: async () => {
      await served.stop("SIGKILL");
      for (const client of clients) client.close();
    },
    connect: async () => {
      const client = await TestClient.connect(`ws://127.0.0.1:${port}/ws`, {
        headers: { origin: `http://127.0.0.1:${port}` },
      });
      clients.push(client);
      return client;
    },
  };
}

function expectType<T extends ServerFrame["type"]>(frame: ServerFrame, type: T): Extract<ServerFrame, { type: T }> {
  expect(frame.type === "error" ? `error ${frame.code}: ${frame.message}` : frame.type).toBe(type);
  return frame as Extract<ServerFrame, { type: T }>;
}

/** Runs the turn over the web to its end, answering its question with "comfort"; returns the result. */
async function runToEnd(client: TestClient, start: Record<string, unknown>): Promise<unknown> {
  client.send(start);
  expectType(await client.next(["session", "error"]), "session");
  for (;;) {
    const frame = await client.next(["question", "turn_done", "turn_failed"]);
    if (frame.type === "question") client.send({ type: "answer", question_id: frame.question_id, value: "comfort" });
    else return expectType(frame, "turn_done").result;
  }
}

describe("kill -9 of the dispatcher while a web turn waits on a question, or around it", () => {
  it(
    `continues each turn to an uninterrupted run's result, no request repeated but the one in flight (${KILLS.length} kills)`,
    { timeout: 240_000 },
    async () => {
      // The reference: the same turn, uninterrupted.
      const reference = await startServer();
      const before = model.requests.length;
      const expected = await runToEnd(await reference.connect(), { type: "run", program: "plan_trip", input: INPUT });
      const referenceBodies = model.requests.slice(before).map((request) => request.body);
      expect(referenceBodies).toHaveLength(5);
      await reference.kill();

      const continuedBy = new Set<string>();
      for (const [round, kill] of KILLS.entries()) {
        const first = model.requests.length;
        const served = await startServer();
        const client = await served.connect();
        client.send({ type: "run", program: "plan_trip", input: INPUT });
        const sessionId = expectType(await client.next(["session", "error"]), "session").session_id;
        if (kill === "at_question") await client.next("question");
        else {
          // Answered at once, so that the kill may land before the question, at it, or after it.
          void client.next("question").then(
            (question) => client.send({ type: "answer", question_id: question.question_id, value: "comfort" }),
            () => undefined, // the socket closed under the kill first
          );
          await client.next("node");
          await new Promise((resolve) => setTimeout(resolve, kill));
        }
        await served.kill();

        // Started again on the same store: continue what the kill left, the way a user would.
        const restarted = await startServer();
        const watcher = await restarted.connect();
        watcher.send({ type: "get_session", session_id: sessionId });
        const detail = expectType(await watcher.next(["session_detail", "error"]), "session_detail");
        const finished = detail.nodes.find((node) => node.name === "plan_trip" && node.metadata.status === "completed");
        let result: unknown = finished?.output;
        const how = finished
          ? "finished before the kill"
          : detail.resumable?.question_id
            ? round % 3 !== 1
              ? "answered from the web"
              : "answered with openprogram answer"
            : "resumed";
        if (how === "answered from the web") {
          result = await runToEnd(watcher, {
            type: "answer",
            session_id: sessionId,
            question_id: detail.resumable?.question_id,
            value: "comfort",
          });
        } else if (how === "answered with openprogram answer") {
          const answered = await runCli(["answer", sessionId, "comfort", "--json"], { env: env() });
          expect(answered.code, answered.stderr).toBe(0);
          result = (JSON.parse(answered.stdout) as { result: unknown }).result;
        } else if (how === "resumed") {
          expect(detail.resumable, `round ${round}: nothing to continue`).not.toBeNull();
          result = await runToEnd(watcher, { type: "resume", session_id: sessionId });
        }
        await restarted.kill();
        continuedBy.add(how);

        const what = `round ${round} (kill ${kill === "at_question" ? "at the question" : `after ${Math.round(kill)} ms`}, ${how})`;
        expect(result, what).toEqual(expected);
        const sent = new Map<string, number>();
        for (const request of model.requests.slice(first)) sent.set(request.body, (sent.get(request.body) ?? 0) + 1);
        expect([...sent.keys()].sort(), what).toEqual([...referenceBodies].sort());
        const repeated = [...sent.values()].filter((count) => count > 1);
        expect(
          repeated.length <= 1 && repeated.every((count) => count === 2),
          `${what}: ${JSON.stringify([...sent.values()])}`,
        ).toBe(true);
        if (kill === "at_question") expect(repeated, what).toEqual([]);

        const db = new SessionDB({ root });
        const nodes = await db.loadNodes(sessionId);
        expect(
          nodes.filter((node) => node.name === "ask_user").map((node) => node.metadata.status),
          what,
        ).toEqual(["answered"]);
        expect(
          nodes.filter((node) => ["running", "waiting"].includes(String(node.metadata.status))),
          what,
        ).toEqual([]);
        const report = await doctorSessions({ db, sessionId });
        expect(
          report.findings.filter((finding) => finding.severity === "error"),
          what,
        ).toEqual([]);
        const doctor = await runCli(["sessions", "doctor", sessionId], { env: env() });
        expect(doctor.code, `${what}: ${doctor.stdout}${doctor.stderr}`).toBe(0);
      }
      expect(continuedBy).toContain("answered from the web");
      expect(continuedBy).toContain("answered with openprogram answer");
    },
  );
});
