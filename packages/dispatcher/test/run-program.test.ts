import { z } from "zod";
import {
  agenticFunction,
  chat,
  currentSession,
  sessionContext,
  type Runtime,
  type SessionNode,
} from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  createTempStore,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type TempStore,
} from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asError, asFrame, closeAll, startDispatcher, type TestDispatcher } from "./helpers.js";

const summarize = agenticFunction(
  { name: "summarize", doc: "Summarize the text in one sentence. Keep names." },
  async ({ text }: { text: string }, { runtime }) => runtime.exec(`Text: ${text}`),
);

let fake: FakeOpenAIServer;
let runtime: Runtime;
let served: TestDispatcher;
let local: TempStore;

beforeEach(async () => {
  fake = await startFakeOpenAIServer((request) => `echo ${request.json.messages?.at(-1)?.content ?? ""}`);
  runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 }) as Runtime;
  served = await startDispatcher({
    runtime,
    programs: {
      summarize,
      shout: {
        description: "Upper-cases input.text, in a runner entry.",
        run: async (input) => ({
          text: String((input as { text: string }).text).toUpperCase(),
          session: currentSession().sessionId,
        }),
      },
    },
  });
  local = createTempStore("openprogram-dispatcher-local-");
});

afterEach(async () => {
  await closeAll();
  local.cleanup();
  await fake.close();
});

function llmNode(nodes: SessionNode[]): SessionNode {
  const found = nodes.filter((node) => node.role === "llm" && node.caller !== "");
  expect(found).toHaveLength(1);
  return found[0] as SessionNode;
}

describe("run frames", () => {
  it("records the same prompt_sha256 as the same function run in-process with the same input and history", async () => {
    const input = { text: "Ada Lovelace wrote the first program." };
    const client = await served.connect();
    client.send({ type: "chat", text: "We are writing a biography." });
    const first = await client.next("session");
    await client.next("turn_done");
    client.send({ type: "run", session_id: first.session_id, program: "summarize", input });
    const done = await client.next("turn_done");
    expect(done.result).toBe(`echo Text: ${input.text}`);
    const webNode = llmNode(await served.store.db.loadNodes(first.session_id));

    const localSessionId = await sessionContext({ db: local.db, runtime, source: "test" }, async (session) => {
      await chat("We are writing a biography.");
      return session.sessionId;
    });
    await sessionContext({ db: local.db, runtime, sessionId: localSessionId, source: "test" }, () => summarize(input));
    const localNode = llmNode(await local.db.loadNodes(localSessionId));

    expect(webNode.metadata.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(webNode.metadata.prompt_sha256).toBe(localNode.metadata.prompt_sha256);
    // The bodies the server received are byte-identical too.
    expect(fake.requests[1]?.body).toBe(fake.requests[3]?.body);
    expect(fake.requests[1]?.json.messages?.[0]).toEqual({
      role: "system",
      content: "Summarize the text in one sentence. Keep names.",
    });
  });

  it("records the call as a code node with the doc, nested llm node, and the output", async () => {
    const client = await served.connect();
    client.send({ type: "run", program: "summarize", input: { text: "x" } });
    const session = await client.next("session");
    expect(session).toMatchObject({ created: true, kind: "run" });
    await client.next("turn_done");
    const nodes = await served.store.db.loadNodes(session.session_id);
    const code = nodes.find((node) => node.role === "code");
    expect(code).toMatchObject({
      name: "summarize",
      input: { text: "x" },
      output: "echo Text: x",
      caller: "",
      metadata: { status: "completed", doc: summarize.agentic.doc },
    });
    expect(llmNode(nodes).caller).toBe(code?.id);
  });

  it("runs an entry with its own run() inside the turn's session context", async () => {
    const client = await served.connect();
    client.send({ type: "run", program: "shout", input: { text: "hi" } });
    const session = await client.next("session");
    const done = await client.next("turn_done");
    expect(done.result).toEqual({ text: "HI", session: session.session_id });
  });

  it("lists the registered programs with their docs", async () => {
    const client = await served.connect();
    const programs = asFrame(await client.request({ type: "list_programs" }, "programs"), "programs");
    expect(programs.programs).toEqual([
      {
        name: "shout",
        kind: "runner",
        description: "Upper-cases input.text, in a runner entry.",
        doc: "",
        input_schema: null,
      },
      {
        name: "summarize",
        kind: "agentic",
        description: "Summarize the text in one sentence. Keep names.",
        doc: summarize.agentic.doc,
        input_schema: null,
      },
    ]);
  });

  it("lists a program's input schema, and refuses a run its schema refuses before any session exists", async () => {
    const planDay = agenticFunction(
      { name: "plan_day", doc: "Plan a day.", input: z.object({ town: z.string(), mood: z.enum(["calm", "lively"]) }) },
      async ({ town, mood }) => `${mood} day in ${town}`,
    );
    const withSchema = await startDispatcher({ runtime, programs: { plan_day: planDay } });
    const client = await withSchema.connect();
    const programs = asFrame(await client.request({ type: "list_programs" }, "programs"), "programs");
    expect(programs.programs[0]?.input_schema).toMatchObject({
      type: "object",
      properties: { town: { type: "string" }, mood: { enum: ["calm", "lively"] } },
      required: ["town", "mood"],
    });
    client.send({ type: "run", program: "plan_day", input: { town: "Paris" }, client_msg_id: "m1" });
    const refused = await client.next("error");
    expect(refused).toMatchObject({ code: "invalid_input", action: "run", ref: "m1" });
    expect(refused.message).toMatch(/^plan_day: input\.mood: Invalid option/);
    expect(await withSchema.store.db.listSessions()).toEqual([]);
    client.send({ type: "run", program: "plan_day", input: { town: "Paris", mood: "calm" } });
    expect((await client.next("turn_done")).result).toBe("calm day in Paris");
  });

  it("refuses an unknown program or an input the function cannot take, before any session exists", async () => {
    const client = await served.connect();
    const unknown = asError(await client.request({ type: "run", program: "/etc/passwd#x", input: {} }, "session"));
    expect(unknown).toMatchObject({ code: "unknown_program", action: "run" });
    expect(unknown.message).toContain("Registered: shout, summarize");
    const notObject = asError(await client.request({ type: "run", program: "summarize", input: [1, 2] }, "session"));
    expect(notObject.code).toBe("invalid_input");
    expect(notObject.message).toContain("run.input of summarize must be a JSON object");
    expect(await served.store.db.listSessions()).toEqual([]);
  });

  it("reports a program that throws as turn_failed with a code, and the connection stays usable", async () => {
    const failing = await startDispatcher({
      runtime,
      programs: {
        boom: agenticFunction({ name: "boom", doc: "Fails." }, async () => Promise.reject(new TypeError("kaboom"))),
      },
    });
    const client = await failing.connect();
    client.send({ type: "run", program: "boom" });
    const failed = await client.next("turn_failed");
    // The same code, class name and message as the CLI reports and the node records (issue 17 §5).
    expect(failed.error).toEqual({ code: "error", name: "TypeError", message: "kaboom" });
    const nodes = await failing.store.db.loadNodes(failed.session_id);
    expect(nodes[0]?.metadata).toMatchObject({ status: "failed", error: { name: "TypeError", message: "kaboom" } });
    expect(asFrame(await client.request({ type: "list_programs" }, "programs"), "programs").programs).toHaveLength(1);
  });
});
