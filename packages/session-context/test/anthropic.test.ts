// The Anthropic provider against a real loopback HTTP server speaking the
// Messages API wire protocol.
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, chat, createRuntime, ProviderError, sessionContext } from "../src/index.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let store: TempStore;
let server: Server;
let baseUrl = "";
const received: Received[] = [];
let answer: (body: Record<string, unknown>) => { status: number; json: unknown } = () => ({ status: 500, json: {} });

beforeEach(async () => {
  store = createTempStore();
  received.length = 0;
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ path: req.url ?? "", headers: req.headers, body });
      const { status, json } = answer(JSON.parse(body) as Record<string, unknown>);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  store.cleanup();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const message = (text: string) => ({
  status: 200,
  json: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [{ type: "text", text }],
    stop_reason: "end_turn",
    usage: { input_tokens: 10, output_tokens: 3 },
  },
});

const DOC = "Name three risks of the plan.\nOne per line.";
const risks = agenticFunction({ name: "name_risks", doc: DOC }, async ({ plan }: { plan: string }, { runtime }) =>
  runtime.exec(`Plan: ${plan}`),
);

describe("the anthropic provider", () => {
  it("sends the doc as the system prompt over the Messages API and records the exact body's hash", async () => {
    answer = () => message("1. cost\n2. time\n3. scope");
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
    expect(received).toHaveLength(1);
    expect(received[0]?.path).toBe("/v1/messages");
    // This SDK version sends the key as a bearer token (older ones used x-api-key).
    expect([received[0]?.headers.authorization, received[0]?.headers["x-api-key"]]).toContain(
      received[0]?.headers.authorization ? "Bearer test-key" : "test-key",
    );
    const body = JSON.parse(received[0]?.body ?? "{}") as {
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
        .update(received[0]?.body ?? "")
        .digest("hex"),
    });
  });

  it("turns history into alternating turns, starting with the user", async () => {
    answer = () => message("Sure.");
    const runtime = createRuntime({ provider: "anthropic", apiKey: "k", baseUrl, model: "claude-test", maxRetries: 0 });
    const id = await sessionContext({ db: store.db, runtime }, async (session) => {
      await chat("Hello");
      return session.sessionId;
    });
    await sessionContext({ db: store.db, runtime, sessionId: id }, () => risks({ plan: "x" }));
    const body = JSON.parse(received[1]?.body ?? "{}") as { messages: Array<{ role: string; content: string }> };
    expect(body.messages.map((entry) => entry.role)).toEqual(["user", "assistant", "user"]);
    expect(body.messages[2]?.content).toBe("Plan: x");
  });

  it("reports an HTTP error as a ProviderError with the status and the API's message", async () => {
    answer = () => ({
      status: 529,
      json: { type: "error", error: { type: "overloaded_error", message: "Overloaded, try later" } },
    });
    const runtime = createRuntime({ provider: "anthropic", apiKey: "k", baseUrl, model: "claude-test", maxRetries: 0 });
    const error = await sessionContext({ db: store.db, runtime }, () => risks({ plan: "x" })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: "anthropic", status: 529, providerMessage: "Overloaded, try later" });
  });
});
