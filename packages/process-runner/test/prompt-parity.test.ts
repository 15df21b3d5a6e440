import { createHash } from "node:crypto";
import { chat, sessionContext } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { outline } from "./programs/outline.js";
import { programPath, useTempStore } from "./helpers.js";

const MODEL = "parity-model";

describe("prompt parity: the child sends the provider what the same call sends in-process", () => {
  const store = useTempStore();
  let server: FakeOpenAIServer;
  beforeEach(async () => {
    // Replies depend only on the request, so both sessions get the same history.
    server = await startFakeOpenAIServer((request) => `reply to: ${request.json.messages?.at(-1)?.content ?? ""}`);
  });
  afterEach(async () => server.close());

  it("sends byte-identical requests (same prompt_sha256) for the same function, input and history", async () => {
    const runtime = createRuntime({ provider: "openai", baseUrl: server.baseUrl, apiKey: "test-key", model: MODEL });
    const childEnv = {
      OPENPROGRAM_HOME: store.home,
      OPENPROGRAM_PROVIDER: "openai",
      OPENAI_BASE_URL: server.baseUrl,
      OPENAI_API_KEY: "test-key",
      OPENPROGRAM_MODEL: MODEL,
    };
    const turn = async (viaChild: boolean): Promise<{ sessionId: string; bodies: string[] }> => {
      const before = server.requests.length;
      const sessionId = await sessionContext({ db: store.db, runtime, source: "test" }, async (session) => {
        // History the call's prompt must render: a conversation turn before it.
        await chat("We are planning a study of sparse attention.");
        const input = { topic: "sparse attention" };
        if (viaChild) await runInChild({ module: programPath("outline.ts"), export: "outline", input, env: childEnv });
        else await outline(input);
        return session.sessionId;
      });
      return { sessionId, bodies: server.requests.slice(before).map((request) => request.body) };
    };

    const inProcess = await turn(false);
    const inChild = await turn(true);
    expect(inProcess.bodies).toHaveLength(3);
    expect(inChild.bodies).toEqual(inProcess.bodies);
    // The function's doc is the system message, byte for byte, in the child too.
    const outlineRequest = JSON.parse(inChild.bodies[2] as string) as {
      model: string;
      messages: Array<{ role: string; content: string }>;
    };
    expect(outlineRequest.model).toBe(MODEL);
    expect(outlineRequest.messages[0]).toEqual({ role: "system", content: outline.agentic.doc });
    // The history rendered: the chat turn before the call, then the call's own subcall.
    expect(outlineRequest.messages.map((message) => message.content).join("\n")).toContain(
      "We are planning a study of sparse attention.",
    );

    const hashes = async (sessionId: string): Promise<unknown[]> =>
      (await store.db.loadNodes(sessionId))
        .filter((node) => node.role === "llm")
        .map((node) => node.metadata.prompt_sha256);
    const expectedHashes = inChild.bodies.map((body) => createHash("sha256").update(body).digest("hex"));
    expect(await hashes(inChild.sessionId)).toEqual(expectedHashes);
    expect(await hashes(inProcess.sessionId)).toEqual(expectedHashes);
  });
});
