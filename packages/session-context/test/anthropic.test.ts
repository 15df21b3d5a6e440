// The Anthropic provider against a real loopback HTTP server speaking the
// Messages API wire protocol.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, chat, ProviderError, sessionContext } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  type FakeAnthropicServer,
  type TempStore,
} from "../src/testing/index.js";

let store: TempStore;
let server: FakeAnthropicServer;
let baseUrl = "";

beforeEach(async () => {
  store = createTempStore();
  server = await startFakeAnthropicServer();
  baseUrl = server.baseUrl;
});
afterEach(async () => {
  store.cleanup();
  await server.close();
});

const DOC = "Name three risks of the plan.\nOne per line.";
const risks = agenticFunction({ name: "name_risks", doc: DOC }, async ({ plan }: { plan: string }, { runtime }) =>
  runtime.exec(`Plan: ${plan}`),
);

describe("the anthropic provider", () => {
  it("sends the doc as the system prompt over the Messages API and records the exact body's hash", async () => {
    server.setHandler(() => "1. cost\n2. time\n3. scope");
    const runtime = createRuntime({
      provider: "anthropic",
      apiKey: "test-key",
      baseUrl,
      model: "claude-test",
      maxRetries: 0,
    });
    const sessionId = await sessionContext({ db: store.db, runtime }, async (session) => {
      expect(await risks({ plan: "ship on Friday" })).toBe("1. cost\n2. time\n3. scope");
      return session.sessionId;
    });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.path).toBe("/v1/messages");
    // This SDK version sends the key as a bearer token (older ones used x-api-key).
    expect([server.requests[0]?.headers.authorization, server.requests[0]?.headers["x-api-key"]]).toContain(
      server.requests[0]?.headers.authorization ? "Bearer test-key" : "test-key",
    );
    const body = JSON.parse(server.requests[0]?.body ?? "{}") as {
      system: string;
      messages: unknown[];
      model: string;
      max_tokens: number;
    };
    expect(body.system).toBe(DOC);
    expect(body.messages).toEqual([{ role: "user", content: "Plan: ship on Friday" }]);
    expect(body).toMatchObject({ model: "claude-test", max_tokens: 4096 });
    const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm");
    expect(llm?.metadata).toMatchObject({
      status: "completed",
      provider: "anthropic",
      prompt_sha256: createHash("sha256")
        .update(server.requests[0]?.body ?? "")
        .digest("hex"),
    });
  });

  it("turns history into alternating turns, starting with the user", async () => {
    server.setHandler(() => "Sure.");
    const runtime = createRuntime({ provider: "anthropic", apiKey: "k", baseUrl, model: "claude-test", maxRetries: 0 });
    const id = await sessionContext({ db: store.db, runtime }, async (session) => {
      await chat("Hello");
      return session.sessionId;
    });
    await sessionContext({ db: store.db, runtime, sessionId: id }, () => risks({ plan: "x" }));
    const body = JSON.parse(server.requests[1]?.body ?? "{}") as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.map((entry) => entry.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[2]?.content).toBe("Plan: x");
  });

  it("reports an HTTP error as a ProviderError with the status and the API's message", async () => {
    server.setHandler(() => ({ status: 529, type: "overloaded_error", message: "Overloaded, try later" }));
    const runtime = createRuntime({ provider: "anthropic", apiKey: "k", baseUrl, model: "claude-test", maxRetries: 0 });
    const error = await sessionContext({ db: store.db, runtime }, () => risks({ plan: "x" })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: "anthropic", status: 529, providerMessage: "Overloaded, try later" });
  });
});
