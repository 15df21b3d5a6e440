// Durable tool calls (issue 32, Durable): a turn whose model called tools,
// interrupted by a provider failure or by SIGKILL of a real child process
// inside a tool, inside its approval wait, or between a tool's end and the
// next request, continues with resumeTurn against a real git store and a real
// HTTP server speaking the chat-completions protocol. A tool that finished is
// never run again and the requests are an uninterrupted run's, byte for byte;
// an interrupted plain tool runs again only when idempotent.
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionContext, type Runtime, type SessionNode } from "../src/index.js";
import { createScriptedAsker } from "../src/entries/host.js";
import { createRuntime } from "../src/entries/runtime.js";
import { doctorSessions } from "../src/entries/store.js";
import { describeTurn, resumeTurn } from "../src/entries/turns.js";
import {
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeReply,
  type TempStore,
} from "../src/testing/index.js";
import { readWal } from "../src/store/session-wal.js";
import { childScript, git, runTsChild } from "./helpers.js";
import { planDay, planDayAtOnce } from "./programs/tool-day.mjs";

const SHOUT_DOC = "Say the text back in capitals, then shorten it.";

let store: TempStore;
let server: FakeOpenAIServer;
let runtime: Runtime;
let logDir: string;
/** Request indexes (0-based, counted across the test) the server fails with HTTP 500. */
let failing: Set<number>;

/**
 * Replies that depend only on the request: the planner calls weather, then
 * book_room, then shout, one per reply, then answers; shout's own requests
 * get text. Every run of the program gets the same replies for the same requests.
 */
function dayModel(json: { messages?: Array<{ role: string; content?: unknown }> }, body: string): FakeReply {
  const messages = json.messages ?? [];
  const digest = createHash("sha256").update(body).digest("hex").slice(0, 8);
  if (messages[0]?.content === SHOUT_DOC) return `LOUD ${digest}`;
  const results = messages.filter((message) => message.role === "tool").length;
  const atOnce = messages.some(
    (message) => typeof message.content === "string" && message.content.endsWith("at once."),
  );
  if (atOnce)
    return results === 0
      ? {
          reply: "",
          toolCalls: [
            { id: "call_weather", name: "weather", arguments: { city: "Oslo" } },
            { id: "call_shout", name: "shout", arguments: { text: "have fun" } },
          ],
        }
      : `Your day ${digest}`;
  const calls = [
    { id: "call_weather", name: "weather", arguments: { city: "Oslo" } },
    { id: "call_book", name: "book_room", arguments: { city: "Oslo" } },
    { id: "call_shout", name: "shout", arguments: { text: "have fun" } },
  ];
  const next = calls[results];
  return next ? { reply: "", toolCalls: [next] } : `Your day ${digest}`;
}

beforeEach(async () => {
  store = createTempStore("openprogram-tool-resume-");
  logDir = mkdtempSync(join(tmpdir(), "openprogram-tool-log-"));
  failing = new Set();
  server = await startFakeOpenAIServer((request, index) =>
    failing.has(index) ? { status: 500, message: `request ${index} fails` } : dayModel(request.json, request.body),
  );
  runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
});
afterEach(async () => {
  await server.close();
  store.cleanup();
  rmSync(logDir, { recursive: true, force: true });
});

const bodies = (): string[] => server.requests.map((request) => request.body);
const logOf = (sessionId: string): string => join(logDir, `${sessionId}.log`);
/** The tools executed for a session, in order, across every process. */
function executions(sessionId: string): string[] {
  try {
    return readFileSync(logOf(sessionId), "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

/** Runs the program (planDay unless told) in this process, as one turn of `sessionId`, approving the booking. */
async function runHere(sessionId: string, program = planDay): Promise<string> {
  process.env.OPENPROGRAM_TEST_TOOL_LOG = logOf(sessionId);
  try {
    return await sessionContext(
      {
        sessionId,
        db: store.db,
        runtime,
        asker: createScriptedAsker(["yes"]),
        program: { ref: `program:${program.name}`, input: { city: "Oslo" } },
      },
      () => program({ city: "Oslo" }),
    );
  } finally {
    delete process.env.OPENPROGRAM_TEST_TOOL_LOG;
  }
}

/** Resumes in this process (the booking approved if it is asked again). */
async function resumeHere(sessionId: string, options: { answer?: string } = {}, program = planDay): Promise<string> {
  process.env.OPENPROGRAM_TEST_TOOL_LOG = logOf(sessionId);
  try {
    return await resumeTurn<string>({
      sessionId,
      db: store.db,
      runtime,
      program,
      asker: options.answer === undefined ? createScriptedAsker(["yes"]) : null,
      ...options,
    });
  } finally {
    delete process.env.OPENPROGRAM_TEST_TOOL_LOG;
  }
}

/** Runs the program in a child process that kills itself with SIGKILL where `env` says. */
async function runKilledChild(sessionId: string, env: Record<string, string>): Promise<void> {
  const outcome = await runTsChild(childScript("tool-day.ts"), [sessionId, "Oslo"], {
    OPENPROGRAM_HOME: store.home,
    TEST_OPENAI_BASE_URL: server.baseUrl,
    OPENPROGRAM_TEST_TOOL_LOG: logOf(sessionId),
    ...env,
  });
  expect(outcome.stdout, outcome.stderr).toBe("");
  expect(outcome.code, outcome.stderr).toBe(null); // killed by a signal, not exited
}

/**
 * A power cut at the kill, at its worst: every write that no fsync or fdatasync covered is gone. Node files and
 * meta.json are never fsynced on their own (the session's write-ahead log holds them): each node file the turn
 * logged is gone (`torn`: its name reached the disk and its data did not, zero bytes), meta.json is back to what
 * createSession made durable, the turn's lease and the change journal are gone, and the log keeps only what its
 * last fdatasync covered (recorded by the child, see children/record-syncs.mjs).
 */
function cutPower(sessionId: string, createdMeta: string, torn: boolean): void {
  const dir = join(store.root, sessionId);
  const wal = join(dir, ".state", "wal");
  const synced = readFileSync(join(logDir, "syncs"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith(`${wal} `))
    .map((line) => Number(line.slice(wal.length + 1)));
  for (const record of readWal(wal)) {
    if (!record.rel.startsWith("history/")) continue;
    if (torn) writeFileSync(join(dir, record.rel), "");
    else rmSync(join(dir, record.rel), { force: true });
  }
  truncateSync(wal, Math.max(0, ...synced));
  writeFileSync(join(dir, "meta.json"), createdMeta);
  rmSync(join(dir, ".state", "journal"), { force: true });
  rmSync(join(dir, ".state", "turns"), { recursive: true, force: true });
}

/** The reference: an uninterrupted run's result, requests and executions. */
async function reference(): Promise<{ result: string; bodies: string[] }> {
  const result = await runHere("reference");
  expect(executions("reference")).toEqual(["weather", "book_room", "shout"]);
  const sent = bodies();
  // plan -> weather, -> book_room, -> shout; shout's two requests; the answer.
  expect(sent).toHaveLength(6);
  server.requests.length = 0;
  return { result, bodies: sent };
}

async function nodesOf(sessionId: string): Promise<SessionNode[]> {
  return store.db.loadNodes(sessionId);
}

async function expectHealthy(sessionId: string): Promise<void> {
  const report = await doctorSessions({ db: store.db, sessionId });
  expect(
    report.findings.filter(
      (finding) => !(finding.kind === "uncommitted_tail" && finding.message.includes("(meta.json)")),
    ),
  ).toEqual([]);
  expect(git(join(store.root, sessionId), "status", "--porcelain")).toBe("");
}

describe("resuming a turn whose model called tools", () => {
  it.each([1, 2, 5])(
    "after request #%i failed: no finished tool runs again, and the requests are the uninterrupted run's",
    async (failAt) => {
      const ref = await reference();
      failing = new Set([failAt]);
      await expect(runHere("failed")).rejects.toMatchObject({ code: "provider_error" });
      failing = new Set();
      const before = server.requests.length;
      // What resume takes from the record: the replies, and the tools and the approval under them.
      expect(describeTurn({ db: store.db, sessionId: "failed" })).toMatchObject({
        resumable: true,
        resumeHelps: true,
        finishedCalls: { 1: 2, 2: 5, 5: 7 }[failAt],
      });

      await expect(resumeHere("failed")).resolves.toBe(ref.result);
      // Each tool ran once (shout's body ran again, replaying its recorded request, when it failed inside it).
      expect(executions("failed").filter((name) => name !== "shout")).toEqual(["weather", "book_room"]);
      expect(bodies().slice(0, before)).toEqual(ref.bodies.slice(0, failAt + 1));
      expect(bodies().slice(before)).toEqual(ref.bodies.slice(failAt));
      const nodes = await nodesOf("failed");
      expect(nodes.filter((node) => node.name === "ask_user")).toHaveLength(1);
      expect(nodes.filter((node) => node.name === "weather")).toHaveLength(1);
      expect(nodes.filter((node) => node.name === "book_room")).toHaveLength(1);
      await expectHealthy("failed");
    },
  );
});

describe("resuming after a power cut (writes no fsync covered dropped)", () => {
  it.each([
    ["after book_room's result", { OPENPROGRAM_TEST_DIE_AFTER: "book_room" }, ["weather", "book_room", "shout"], false],
    [
      "inside shout, files torn",
      { OPENPROGRAM_TEST_DIE_IN: "shout" },
      ["weather", "book_room", "shout", "shout"],
      true,
    ],
  ] as const)(
    "%s: the log puts the turn back, no tool runs again, no request is repeated",
    async (_, env, expected, torn) => {
      const ref = await reference();
      await store.db.createSession({ id: "cut" });
      const createdMeta = readFileSync(join(store.root, "cut", "meta.json"), "utf8");
      await runKilledChild("cut", {
        ...env,
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${childScript("record-syncs.mjs")}`,
        OPENPROGRAM_TEST_SYNC_LOG: join(logDir, "syncs"),
      });
      const calls = bodies().length;
      cutPower("cut", createdMeta, torn);

      // A new process after the cut: a store that has never read the session.
      const { SessionDB } = await import("../src/entries/store.js");
      process.env.OPENPROGRAM_TEST_TOOL_LOG = logOf("cut");
      try {
        await expect(
          resumeTurn<string>({
            sessionId: "cut",
            db: new SessionDB({ root: store.root }),
            runtime,
            program: planDay,
            asker: createScriptedAsker(["yes"]),
          }),
        ).resolves.toBe(ref.result);
      } finally {
        delete process.env.OPENPROGRAM_TEST_TOOL_LOG;
      }
      expect(executions("cut")).toEqual(expected);
      // What was asked before the cut is not asked again.
      expect(bodies()).toEqual(ref.bodies);
      expect(calls).toBeLessThan(ref.bodies.length);
      await expectHealthy("cut");
    },
  );
});

describe("resuming after SIGKILL of the process running the turn", () => {
  it.each([
    ["weather", ["weather", "book_room", "shout"]],
    ["book_room", ["weather", "book_room", "shout"]],
    ["shout", ["weather", "book_room", "shout"]],
  ])("killed once %s's result was recorded: nothing runs again and no request is repeated", async (tool, expected) => {
    const ref = await reference();
    await runKilledChild("after", { OPENPROGRAM_TEST_DIE_AFTER: tool });
    await expect(resumeHere("after")).resolves.toBe(ref.result);
    expect(executions("after")).toEqual(expected);
    expect(bodies()).toEqual(ref.bodies);
    await expectHealthy("after");
  });

  it("killed inside an idempotent tool: it runs again, and the requests are the uninterrupted run's", async () => {
    const ref = await reference();
    await runKilledChild("in_weather", { OPENPROGRAM_TEST_DIE_IN: "weather" });
    await expect(resumeHere("in_weather")).resolves.toBe(ref.result);
    expect(executions("in_weather")).toEqual(["weather", "weather", "book_room", "shout"]);
    expect(bodies()).toEqual(ref.bodies);
    const runs = (await nodesOf("in_weather")).filter((node) => node.name === "weather");
    expect(runs.map((node) => node.metadata.status)).toEqual(["interrupted", "completed"]);
    expect(runs[1]?.metadata).toMatchObject({ tool_call_id: "call_weather", resumes: { node_id: runs[0]?.id } });
    await expectHealthy("in_weather");
  });

  it("killed inside a tool that is not idempotent: it is not run again, and the model is told its effect is unknown", async () => {
    const ref = await reference();
    await runKilledChild("in_book", { OPENPROGRAM_TEST_DIE_IN: "book_room" });
    // Killed at once, its running node's file was still held (AppendOptions.holdFile): the log alone has it, and
    // the resuming process puts it in place from there before reading the turn.
    const dir = join(store.root, "in_book");
    const inPlace = readdirSync(join(dir, "history")).map(
      (name) => (JSON.parse(readFileSync(join(dir, "history", name), "utf8")) as SessionNode).name,
    );
    expect(inPlace).toContain("weather");
    expect(inPlace).not.toContain("book_room");
    const logged = readWal(join(dir, ".state", "wal")).map((record) => JSON.parse(record.data) as SessionNode);
    expect(logged.find((node) => node.name === "book_room")?.metadata).toMatchObject({ status: "running" });
    const result = await resumeHere("in_book");
    expect(executions("in_book")).toEqual(["weather", "book_room", "shout"]);
    // Up to the booking the requests are the uninterrupted run's; the next one carries the interruption.
    expect(bodies().slice(0, 2)).toEqual(ref.bodies.slice(0, 2));
    expect(new Set(bodies()).size).toBe(bodies().length);
    const afterBooking = JSON.parse(bodies()[2] ?? "{}") as { messages: Array<{ role: string; content: string }> };
    expect(afterBooking.messages.at(-1)).toMatchObject({
      role: "tool",
      content: expect.stringMatching(/^\[error\] book_room was running when the turn was interrupted/) as unknown,
    });
    expect(result).not.toBe(ref.result);
    const runs = (await nodesOf("in_book")).filter((node) => node.name === "book_room");
    expect(runs.map((node) => node.metadata.status)).toEqual(["interrupted", "failed"]);
    expect(runs[1]?.metadata).toMatchObject({
      tool_call_id: "call_book",
      is_error: true,
      error: { code: "tool_interrupted" },
      resumes: { node_id: runs[0]?.id },
    });
    await expectHealthy("in_book");
  });

  it("killed inside an agentic-function tool: it continues, replaying its own recorded request", async () => {
    const ref = await reference();
    await runKilledChild("in_shout", { OPENPROGRAM_TEST_DIE_IN: "shout" });
    await expect(resumeHere("in_shout")).resolves.toBe(ref.result);
    // shout's body runs again (its first request replayed); the plain tools do not.
    expect(executions("in_shout")).toEqual(["weather", "book_room", "shout", "shout"]);
    expect(bodies()).toEqual(ref.bodies);
    const runs = (await nodesOf("in_shout")).filter((node) => node.name === "shout");
    expect(runs.map((node) => node.metadata.status)).toEqual(["interrupted", "completed"]);
    await expectHealthy("in_shout");
  });

  it.each(["asked again", "answered with resume"])(
    "killed while the approval waited: the question is %s, and the booking runs once",
    async (how) => {
      const ref = await reference();
      await runKilledChild("asking", { OPENPROGRAM_TEST_DIE_ASKING: "1" });
      expect(executions("asking")).toEqual(["weather"]);
      const turn = describeTurn({ db: store.db, sessionId: "asking" });
      expect(turn.question).toMatchObject({ question: 'Allow the tool book_room to run with {"city":"Oslo"}?' });
      const result = await resumeHere("asking", how === "asked again" ? {} : { answer: "yes" });
      expect(result).toBe(ref.result);
      expect(executions("asking")).toEqual(["weather", "book_room", "shout"]);
      expect(bodies()).toEqual(ref.bodies);
      const asks = (await nodesOf("asking")).filter((node) => node.name === "ask_user");
      expect(asks.map((node) => [node.metadata.status, node.output])).toEqual([["answered", "yes"]]);
      await expectHealthy("asking");
    },
  );
});

describe("resuming a turn whose model asked for two tools in one reply (run concurrently)", () => {
  it("killed inside the agentic tool after the plain one finished: it runs no finished tool again and repeats no request", async () => {
    const result = await runHere("reference", planDayAtOnce);
    expect(executions("reference")).toEqual(["weather", "shout"]);
    // The plan asking for both; shout's two requests; the answer reading both results, in the order asked.
    const sent = bodies();
    expect(sent).toHaveLength(4);
    const answerRequest = JSON.parse(sent[3] ?? "{}") as { messages: Array<{ role: string; tool_call_id?: string }> };
    expect(answerRequest.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual([
      "call_weather",
      "call_shout",
    ]);
    server.requests.length = 0;

    await runKilledChild("at_once", { OPENPROGRAM_TEST_AT_ONCE: "1", OPENPROGRAM_TEST_DIE_IN: "shout" });
    expect(executions("at_once")).toEqual(["weather", "shout"]);
    await expect(resumeHere("at_once", {}, planDayAtOnce)).resolves.toBe(result);
    // weather's recorded result is used; shout's body runs again, replaying its recorded first request.
    expect(executions("at_once")).toEqual(["weather", "shout", "shout"]);
    expect(bodies()).toEqual(sent);
    const nodes = await nodesOf("at_once");
    const weatherRuns = nodes.filter((node) => node.name === "weather");
    const shoutRuns = nodes.filter((node) => node.name === "shout");
    expect(weatherRuns.map((node) => node.metadata.status)).toEqual(["completed"]);
    expect(shoutRuns.map((node) => node.metadata.status)).toEqual(["interrupted", "completed"]);
    // Both calls sit under the one reply that asked for them.
    expect(new Set([weatherRuns[0]?.caller, shoutRuns[0]?.caller]).size).toBe(1);
    await expectHealthy("at_once");
  });
});
