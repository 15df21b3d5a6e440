// MCP from the command line: `chat --mcp`, a program using mcpTools under `run` (killed -9 mid-tool, then
// resumed), and `openprogram mcp` driven by the SDK's own client over stdio.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TestClient } from "@openprogram/dispatcher/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CLI_DIR,
  createCliHome,
  program,
  runCli,
  sessionIdFrom,
  spawnCli,
  startServe,
  stopCliProcesses,
  waitFor,
  type CliHome,
} from "./helpers/cli.js";

const NOTES_SERVER = fileURLToPath(new URL("../../mcp/test/servers/notes-server.mjs", import.meta.url));

let home: CliHome;
let effects: string;
beforeEach(() => {
  home = createCliHome();
  effects = join(home.home, "effects.log");
});
afterEach(async () => {
  await home.cleanup();
});

function notesConfig(extra: Record<string, unknown> = {}, env: Record<string, string> = {}): void {
  home.file(
    "config.json",
    JSON.stringify({
      mcpServers: {
        notes: { command: process.execPath, args: [NOTES_SERVER], env: { NOTES_LOG: effects, ...env }, ...extra },
      },
    }),
  );
}

const effectLines = (): string[] => {
  try {
    return readFileSync(effects, "utf8").trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

const toolMessages = (log: string, request: number): unknown[] => {
  const lines = readFileSync(log, "utf8").trim().split("\n");
  const body = JSON.parse(lines[request] ?? "{}") as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((message) => message.role === "tool").map((message) => message.content);
};

describe("MCP from the command line", () => {
  it("chat --mcp offers a server's tools in each turn, asking before those not allowed", async () => {
    notesConfig({ allow: ["add"] });
    const script = home.scripted([
      {
        toolCalls: [
          { name: "notes__add", arguments: { a: 2, b: 3 } },
          { name: "notes__fail", arguments: {} },
        ],
      },
      "The sum is 5; the disk is full.",
    ]);
    const answers = home.file("answers.json", JSON.stringify(["yes"]));
    const result = await runCli(["chat", "--mcp", "notes", "--answers", answers], {
      env: home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env }),
      input: "Add 2 and 3.\n",
    });
    // The tool lines say a failing tool's error; the command itself reports none.
    expect(result.stderr).not.toMatch(/^error \[/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("The sum is 5; the disk is full.\n");
    // Each tool call is a line on stderr as it ends: the failing one says the error the model reads.
    expect(result.stderr).toMatch(/^tool notes__add \{"a":2,"b":3\} {2}ok {2}\d+\.\d\ds$/m);
    expect(result.stderr).toMatch(/^tool notes__fail \{\} {2}error: the disk is full {2}\d+\.\d\ds$/m);
    expect(effectLines()).toEqual(["add 2 3"]);
    expect(toolMessages(script.log, 1)).toEqual(["5", "[error] the disk is full"]);
    const first = JSON.parse(readFileSync(script.log, "utf8").split("\n")[0] ?? "{}") as {
      tools: Array<{ function: { name: string } }>;
    };
    expect(first.tools.map((entry) => entry.function.name)).toContain("notes__add");
  });

  it("serve --mcp lets the page enable a configured server's tools for a chat turn; an unknown name stops it", async () => {
    notesConfig({ allow: ["add"] });
    const script = home.scripted([{ toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 3 } }] }, "It is 5."]);
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env });
    const { child, run, start } = await startServe(["--no-token", "--mcp", "notes"], { env });
    const client = await TestClient.connect(String(start.ws_url));
    try {
      expect(await client.request({ type: "list_mcp_servers" }, "mcp_servers")).toEqual({
        type: "mcp_servers",
        servers: [{ name: "notes", transport: "stdio", allow: ["add"] }],
      });
      client.send({ type: "chat", text: "Add 2 and 3.", mcp_servers: ["notes"] });
      expect(await client.next(["turn_done", "turn_failed", "error"])).toMatchObject({
        type: "turn_done",
        result: "It is 5.",
      });
    } finally {
      client.close();
    }
    expect(effectLines()).toEqual(["add 2 3"]);
    expect(toolMessages(script.log, 1)).toEqual(["5"]);
    child.kill("SIGTERM");
    expect((await run).code).toBe(0);

    const unknown = await runCli(["serve", "--port", "0", "--no-token", "--mcp", "github"], { env });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("error [mcp_server_unknown]");
    expect(unknown.stderr).toContain('No MCP server is named "github" (configured: notes)');
    await stopCliProcesses();
  });

  it("chat --mcp with a server that cannot start stops before the first message, naming it", async () => {
    home.file("config.json", JSON.stringify({ mcpServers: { github: { command: "openprogram-no-such-server" } } }));
    const result = await runCli(["chat", "--mcp", "github"], {
      env: home.env({ OPENPROGRAM_PROVIDER: "scripted", ...home.scripted(["never"]).env }),
      input: "Hello\n",
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error [mcp_server_start_failed]");
    expect(result.stderr).toContain('"github"');
  });

  it("a program killed -9 in the middle of an MCP tool resumes without running that tool again", async () => {
    notesConfig({ allow: ["add", "write.note"] }, { NOTES_HANG_ON: "milk" });
    // The cleaned name of write.note carries a hash: ask the server's listing for it.
    const noteName = await cleanedName();
    const script = home.scripted([{ toolCalls: [{ name: noteName, arguments: { text: "milk" } }] }]);
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env });

    const child = spawnCli(["run", program("mcp-notes.mjs")], { env, cwd: home.home });
    child.stdin.end();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => effectLines().includes("write milk"), "the note tool to start", 30_000);
    const sessionId = sessionIdFrom(stderr);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-(child.pid as number), "SIGKILL");
    await exited;

    // The replies after the kill (the first one comes from the record).
    const after = home.scripted([{ toolCalls: [{ name: "add", arguments: { a: 2, b: 3 } }] }, "Noted (maybe), and 5."]);
    const resumed = await runCli(["resume", sessionId, "--program", program("mcp-notes.mjs")], {
      env: { ...env, ...after.env },
      cwd: home.home,
    });
    expect(resumed.stderr).not.toMatch(/^error/m);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("Noted (maybe), and 5.\n");
    // write.note was not run twice; add (read-only) ran once, after the resume.
    expect(effectLines()).toEqual(["write milk", "add 2 3"]);
    const messages = toolMessages(after.log, 1);
    expect(messages[0]).toMatch(/^\[error\] write_note_[0-9a-f]{8} was running when the turn was interrupted/);
    expect(messages[1]).toBe("5");
  });

  it("openprogram mcp serves a program to the SDK's client over stdio, each call a turn with its session id", async () => {
    const script = home.scripted(["Hello, Ada!"]);
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env });
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(CLI_DIR, "dist/bin.js"), "mcp", "--program", `${program("greeter.mjs")}#greet`],
        env,
        cwd: home.home,
        stderr: "pipe",
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((entry) => [entry.name, entry.description])).toEqual([["greet", "Greets someone by name."]]);
      const result = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
      expect(result.structuredContent).toMatchObject({ ok: true, result: "Hello, Ada!" });
      const { session_id: sessionId } = result.structuredContent as { session_id: string };
      const shown = await runCli(["sessions", "show", sessionId, "--json"], { env });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain('"source":"mcp"');
    } finally {
      await client.close();
    }
  });
});

/** The name the model sees for write.note: asked of the server through our own client, as a program would. */
async function cleanedName(): Promise<string> {
  const { mcpTools, closeMcpServers } = await import("@openprogram/mcp");
  const tools = await mcpTools("notes", {
    config: { command: process.execPath, args: [NOTES_SERVER] },
    prefix: "",
    only: ["write.note"],
  });
  await closeMcpServers();
  return tools[0]?.name ?? "?";
}
