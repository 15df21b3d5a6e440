// Our client against a real MCP server (the SDK's McpServer) in a child process over stdio.
import { getEventListeners } from "node:events";
import { agenticFunction, sessionContext, type SessionEvent, type SessionNode } from "@openprogram/session-context";
import { createScriptedAsker, scriptedRuntime, type TempStore } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import {
  listMcpResources,
  mcpTools,
  McpServerCrashedError,
  McpServerStartError,
  McpTimeoutError,
  McpToolError,
  openMcpServerCount,
  readMcpResource,
} from "../src/index.js";
import { eachTestInMcpSpace, notesEntry, serverFile, type Scratch } from "./helpers.js";

let store: TempStore;
let space: Scratch;
eachTestInMcpSpace((made) => {
  ({ store, space } = made);
});

const toolsOf = (options: Parameters<typeof mcpTools>[1] = {}) =>
  mcpTools("notes", { env: space.env, cwd: space.dir, ...options });

describe("mcpTools over stdio", () => {
  it("offers a configured server's tools as ordinary tools, with names the providers accept", async () => {
    space.userConfig({ mcpServers: { notes: { ...notesEntry(space.log), deny: ["hang"], allow: ["add"] } } });
    const tools = await toolsOf();
    expect(tools.map((entry) => [entry.name, entry.idempotent, entry.needsApproval])).toEqual([
      ["notes__add", true, false],
      [expect.stringMatching(/^notes__write_note_[0-9a-f]{8}$/), false, true],
      ["notes__fail", false, true],
      ["notes__crash", false, true],
    ]);
    expect(tools[0]?.description).toBe("Adds two numbers.");
    expect(tools[0]?.parameters).toMatchObject({ type: "object", properties: { a: { type: "number" } } });
    // Started once, reused by the next turn.
    await toolsOf({ only: ["add"] });
    expect(openMcpServerCount()).toBe(1);
  });

  it("runs an MCP tool in exec as a recorded tool node, asking first unless allowed", async () => {
    space.userConfig({ mcpServers: { notes: { ...notesEntry(space.log), allow: ["add"] } } });
    const tools = await toolsOf({ only: ["add", "write.note"], prefix: "" });
    const { runtime, provider } = scriptedRuntime([
      {
        toolCalls: [
          { name: "add", arguments: { a: 2, b: 3 } },
          { name: tools[1]?.name ?? "?", arguments: { text: "milk" } },
        ],
      },
      "2 + 3 = 5, and the note is saved.",
    ]);
    const asker = createScriptedAsker(["yes"]);
    const helper = agenticFunction({ name: "helper", doc: "Help." }, async (_: object, { runtime: model }) =>
      model.exec("Add 2 and 3, and note milk.", { tools }),
    );
    const sessionId = await sessionContext({ db: store.db, runtime, asker }, async (session) => {
      await helper({});
      return session.sessionId;
    });
    expect(asker.questions.map((question) => question.question)).toEqual([
      expect.stringContaining(`Allow the tool ${tools[1]?.name} to run with {"text":"milk"}?`),
    ]);
    expect(space.effects()).toEqual(["add 2 3", "write milk"]);
    const nodes: SessionNode[] = await store.db.loadNodes(sessionId);
    expect(nodes.find((node) => node.name === "add")).toMatchObject({
      role: "code",
      input: { a: 2, b: 3 },
      output: "5",
      metadata: { status: "completed", idempotent: true },
    });
    const results = provider.requests[1]?.request.messages.filter((message) => message.role === "tool");
    expect(results?.map((message) => message.content)).toEqual(["5", "saved: milk"]);
  });

  it("gives an error result the model reads for a tool the server says failed, and never offers a denied one", async () => {
    space.userConfig({ mcpServers: { notes: { ...notesEntry(space.log), deny: ["write.note"] } } });
    const tools = await toolsOf();
    expect(tools.map((entry) => entry.name)).toEqual(["notes__add", "notes__fail", "notes__crash", "notes__hang"]);
    const fail = tools.find((entry) => entry.name === "notes__fail");
    const error = await Promise.resolve(
      fail?.execute({}, { signal: new AbortController().signal, toolCallId: "c1" }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpToolError);
    expect(error).toMatchObject({ code: "mcp_tool_error", message: "the disk is full" });
  });

  it("names a server that crashes mid-call, with its exit and stderr, then starts it again on the next call", async () => {
    const tools = await toolsOf({ config: notesEntry(space.log) });
    const signal = new AbortController().signal;
    const crash = tools.find((entry) => entry.name === "notes__crash");
    const error = await Promise.resolve(crash?.execute({}, { signal, toolCallId: "c1" })).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpServerCrashedError);
    expect(error).toMatchObject({ code: "mcp_server_crashed", server: "notes" });
    expect((error as Error).message).toContain("exit code 3");
    expect((error as McpServerCrashedError).stderrTail).toContain("fatal: the notes database is corrupt");
    const add = tools.find((entry) => entry.name === "notes__add");
    expect(await add?.execute({ a: 1, b: 1 }, { signal, toolCallId: "c2" })).toBe("2");
  });

  it("fails to start a server that exits before the handshake, naming it and its stderr tail", async () => {
    const error = await mcpTools("github", {
      config: { command: process.execPath, args: [serverFile("broken-server")] },
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpServerStartError);
    expect(error).toMatchObject({ code: "mcp_server_start_failed", server: "github" });
    expect((error as Error).message).toMatch(/"github".*exited \(exit code 2\)/s);
    expect((error as Error).message).toContain("GITHUB_TOKEN is not set");
  });

  it("fails to start a program that does not exist", async () => {
    const error = await mcpTools("ghost", { config: { command: "openprogram-no-such-mcp-server" } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(McpServerStartError);
    expect((error as Error).message).toContain("ENOENT");
  });

  it("gives up on a server that never answers the handshake, and on a call that never returns", async () => {
    const silent = await mcpTools("silent", {
      config: { command: process.execPath, args: [serverFile("silent-server")], startTimeoutMs: 1500 },
    }).catch((caught: unknown) => caught);
    expect(silent).toBeInstanceOf(McpServerStartError);
    expect((silent as Error).message).toContain("did not complete the MCP handshake within 1500 ms");
    expect((silent as Error).message).toContain("silent server listening");

    const tools = await toolsOf({ config: { ...notesEntry(space.log), timeoutMs: 1500 } });
    const hang = tools.find((entry) => entry.name === "notes__hang");
    const error = await Promise.resolve(
      hang?.execute({}, { signal: new AbortController().signal, toolCallId: "c1" }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpTimeoutError);
    expect(error).toMatchObject({ code: "mcp_timeout", server: "notes", timeoutMs: 1500 });
  });

  it("stops a call when the turn is cancelled", async () => {
    const tools = await toolsOf({ config: notesEntry(space.log) });
    const hang = tools.find((entry) => entry.name === "notes__hang");
    const controller = new AbortController();
    const running = Promise.resolve(hang?.execute({}, { signal: controller.signal, toolCallId: "c1" }));
    const reason = new Error("stop");
    setTimeout(() => controller.abort(reason), 200);
    await expect(running).rejects.toBe(reason);
  });

  it("leaves no listener on the turn's signal however many calls it makes", async () => {
    const tools = await toolsOf({ config: notesEntry(space.log) });
    const add = tools.find((entry) => entry.name === "notes__add");
    const signal = new AbortController().signal;
    for (let call = 0; call < 20; call++) await add?.execute({ a: call, b: 0 }, { signal, toolCallId: `c${call}` });
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("gives the model an error for a denied tool it calls anyway, and emits tool events for the others", async () => {
    space.userConfig({ mcpServers: { notes: { ...notesEntry(space.log), deny: ["crash"], allow: ["add"] } } });
    const tools = await toolsOf({ only: ["add", "crash"] });
    expect(tools.map((entry) => entry.name)).toEqual(["notes__add"]);
    const { runtime, provider } = scriptedRuntime([
      {
        toolCalls: [
          { name: "notes__crash", arguments: {} },
          { name: "notes__add", arguments: { a: 1, b: 2 } },
        ],
      },
      "3.",
    ]);
    const events: SessionEvent[] = [];
    const helper = agenticFunction({ name: "helper", doc: "Help." }, async (_: object, { runtime: model }) =>
      model.exec("Crash, then add.", { tools }),
    );
    await sessionContext({ db: store.db, runtime, onEvent: (event) => events.push(event) }, () => helper({}));
    const results = provider.requests[1]?.request.messages.filter((message) => message.role === "tool");
    expect(results?.map((message) => message.content)).toEqual([
      expect.stringMatching(/^\[error\] There is no tool named "notes__crash"/),
      "3",
    ]);
    expect(events.filter((event) => event.type === "tool_result").map((event) => [event.name, event.ok])).toEqual([
      ["notes__crash", false],
      ["notes__add", true],
    ]);
    expect(space.effects()).toEqual(["add 1 2"]);
  });

  it("lists and reads a server's resources as content blocks", async () => {
    const config = notesEntry(space.log);
    expect(await listMcpResources("notes", { config })).toEqual([
      {
        uri: "notes://readme",
        name: "readme",
        title: "Read me",
        description: "How the notes work.",
        mimeType: "text/markdown",
      },
    ]);
    expect(await readMcpResource("notes", "notes://readme", { config })).toEqual([
      { type: "text", uri: "notes://readme", mimeType: "text/markdown", text: "# Notes\nWrite them down." },
    ]);
  });
});
