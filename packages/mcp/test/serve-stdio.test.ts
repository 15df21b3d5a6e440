// The SDK's own MCP client spawning our programs server as a child process over stdio.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, ElicitRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openStore } from "@openprogram/session-context/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scratch, type Scratch } from "./helpers.js";

const ENTRY = fileURLToPath(new URL("./servers/programs-entry.mjs", import.meta.url));

let space: Scratch;
let clients: Client[] = [];
beforeEach(() => {
  space = scratch();
  const script = join(space.dir, "replies.json");
  writeFileSync(
    script,
    JSON.stringify([
      { reply: "Hello, Ada!", when: { content: "Greet Ada." } },
      { reply: "Hello again, Ada!", when: { content: "Greet Ada." } },
      { reply: "Done at last.", delayMs: 600_000, when: { content: "Take your time." } },
    ]),
  );
  space.env.OPENPROGRAM_PROVIDER = "scripted";
  space.env.OPENPROGRAM_SCRIPT = script;
});
afterEach(async () => {
  await Promise.all(clients.map((client) => client.close()));
  clients = [];
  space.cleanup();
});

async function connect(options: { elicit?: (question: string) => string } = {}): Promise<Client> {
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  if (options.elicit) {
    const elicit = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, (request) => ({
      action: "accept",
      content: { answer: elicit(request.params.message) },
    }));
  }
  const env = Object.fromEntries(
    Object.entries(space.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [ENTRY], env, stderr: "pipe" }));
  clients.push(client);
  return client;
}

const texts = (result: CallToolResult) =>
  result.content.flatMap((block) => (block.type === "text" ? [block.text] : []));

describe("programs served over stdio", () => {
  it("lists each program as a tool (its doc, its input schema and session_id) and runs a call as a turn", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((entry) => entry.name)).toEqual(["greet", "confirm", "ponder"]);
    expect(tools[0]).toMatchObject({
      description: "Greets someone by name.",
      inputSchema: {
        type: "object",
        properties: { name: { type: "string" }, session_id: { type: "string" } },
        required: ["name"],
      },
    });

    const first = (await client.callTool({ name: "greet", arguments: { name: "Ada" } })) as CallToolResult;
    expect(first.isError).toBeUndefined();
    const { session_id: sessionId } = first.structuredContent as { session_id: string };
    expect(first.structuredContent).toMatchObject({ ok: true, result: "Hello, Ada!" });
    expect(texts(first)).toEqual(["Hello, Ada!", `session_id: ${sessionId}`]);

    // The same session, continued: its history grows.
    const second = await client.callTool({ name: "greet", arguments: { name: "Ada", session_id: sessionId } });
    expect(second.structuredContent).toMatchObject({ ok: true, session_id: sessionId, result: "Hello again, Ada!" });
    const store = openStore({ root: join(space.env.OPENPROGRAM_HOME as string, "sessions") });
    const session = await store.getSession(sessionId);
    expect(session).toMatchObject({ id: sessionId });
    const calls = (await store.loadNodes(sessionId)).filter((node) => node.name === "greet");
    expect(calls).toHaveLength(2);
    expect(calls[0]?.metadata.resumable).toMatchObject({ program: "test:greet", input: { name: "Ada" } });

    const refused = (await client.callTool({ name: "greet", arguments: { name: 7 } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(texts(refused)[0]).toMatch(/^error \[invalid_input\]/);
  });

  it("asks askUser's question through elicitation when the client supports it", async () => {
    const asked: string[] = [];
    const client = await connect({
      elicit: (question) => {
        asked.push(question);
        return "yes";
      },
    });
    const result = await client.callTool({ name: "confirm", arguments: {} });
    expect(asked).toEqual(["Go on?"]);
    expect(result.structuredContent).toMatchObject({ ok: true, result: "answered yes" });
  });

  it("leaves a question waiting without elicitation, naming openprogram answer and the session", async () => {
    const client = await connect();
    const result = (await client.callTool({ name: "confirm", arguments: {} })) as CallToolResult;
    expect(result.isError).toBe(true);
    const { session_id: sessionId } = result.structuredContent as { session_id: string };
    expect(texts(result)[0]).toContain(`openprogram answer ${sessionId} <answer>`);
    expect(texts(result)[0]).toContain('asked "Go on?" (yes / no)');
    expect(result.structuredContent).toMatchObject({ ok: false, error: { code: "needs_input" } });
    // The question stays waiting: the turn is suspended, not failed.
    const store = openStore({ root: join(space.env.OPENPROGRAM_HOME as string, "sessions") });
    const question = (await store.loadNodes(sessionId)).find((node) => node.name === "ask_user");
    expect(question?.metadata.status).toBe("waiting");
  });

  it("sends node events as progress, and a cancelled request cancels the turn", async () => {
    const client = await connect();
    const controller = new AbortController();
    const events: Array<Record<string, unknown>> = [];
    const call = client.callTool({ name: "ponder", arguments: {} }, CallToolResultSchema, {
      signal: controller.signal,
      onprogress: (progress) => {
        const event = JSON.parse(progress.message ?? "{}") as Record<string, unknown>;
        events.push(event);
        // The model call has started: stop it.
        if (event.type === "node" && event.role === "llm" && event.op === "append") controller.abort("enough");
      },
    });
    await expect(call).rejects.toThrow();
    const sessionId = events[0]?.session_id as string;
    expect(events.find((event) => event.type === "node")).toMatchObject({ role: "code", name: "ponder" });
    const store = openStore({ root: join(space.env.OPENPROGRAM_HOME as string, "sessions") });
    // The server records the cancellation once it has seen it.
    const ponderNode = async () => (await store.loadNodes(sessionId)).find((node) => node.name === "ponder");
    for (let tries = 0; tries < 200 && (await ponderNode())?.metadata.status !== "cancelled"; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await ponderNode())?.metadata).toMatchObject({
      status: "cancelled",
      resumable: { program: "test:ponder" },
    });
  });
});
