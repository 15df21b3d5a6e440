// `openprogram mcp` as a Claude Desktop-style client starts it: the README's mcpServers block, with only the
// environment such a client gives (the SDK's short inherited list plus the entry's env) and no useful cwd; and the
// turns it runs continued from the command line, as its messages say (`answer`, `resume`).
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { openStore } from "@openprogram/session-context/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_DIR, createCliHome, program, runCli, waitFor, type CliHome } from "./helpers/cli.js";

let home: CliHome;
beforeEach(() => {
  home = createCliHome();
});
afterEach(async () => {
  await home.cleanup();
});

/** The README's block: { command, args, env }, as the client spawns it. */
async function connect(entry: { args: string[]; env: Record<string, string> }): Promise<Client> {
  const client = new Client({ name: "desktop-like", version: "1.0.0" });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [join(CLI_DIR, "dist/bin.js"), ...entry.args],
      env: entry.env,
      cwd: "/",
      stderr: "pipe",
    }),
  );
  return client;
}

describe("openprogram mcp from a client's mcpServers block", () => {
  it("a question the client cannot elicit waits; `openprogram answer` as the error says finishes the turn", async () => {
    const env = { OPENPROGRAM_HOME: home.home, OPENPROGRAM_PROVIDER: "none" };
    const module = program("ask-choice.mjs");
    const client = await connect({ args: ["mcp", "--program", module], env });
    let sessionId: string;
    let text: string;
    try {
      const result = (await client.callTool({ name: "pick_colour", arguments: {} })) as CallToolResult;
      expect(result.isError).toBe(true);
      sessionId = (result.structuredContent as { session_id: string }).session_id;
      text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
    } finally {
      await client.close();
    }
    const command = new RegExp(`\`(openprogram answer ${sessionId} <answer>)\``).exec(text)?.[1];
    expect(command).toBeDefined();
    const answered = await runCli(["answer", sessionId, "green", "--program", module], { env: home.env(env) });
    expect(answered.stderr).not.toMatch(/^error/m);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toBe("chart in green\n");
  });

  it("a call the client cancels is recorded cancelled, and `openprogram resume` continues it", async () => {
    const script = home.scripted([{ reply: "never in time", delayMs: 600_000 }]);
    const env = { OPENPROGRAM_HOME: home.home, OPENPROGRAM_PROVIDER: "scripted", ...script.env };
    const module = program("slow-pipeline.mjs");
    const client = await connect({ args: ["mcp", "--program", module], env });
    let sessionId = "";
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: "report", arguments: {} }, CallToolResultSchema, {
        signal: controller.signal,
        onprogress: (progress) => {
          const event = JSON.parse(progress.message ?? "{}") as Record<string, unknown>;
          if (typeof event.session_id === "string") sessionId = event.session_id;
          if (event.type === "node" && event.role === "llm" && event.op === "append") controller.abort("enough");
        },
      });
      await expect(call).rejects.toThrow();
      const store = openStore({ root: join(home.home, "sessions") });
      const reportNode = async () => (await store.loadNodes(sessionId)).find((node) => node.name === "report");
      await waitFor(
        async () => (await reportNode())?.metadata.status === "cancelled",
        "the turn to be recorded cancelled",
        20_000,
      );
    } finally {
      await client.close();
    }
    // Each process reads its script from the start: the resumed model call gets the reply after the one cancelled.
    const after = home.scripted(["The report, at last."]);
    const resumed = await runCli(["resume", sessionId, "--program", module], {
      env: home.env({ ...env, ...after.env }),
    });
    expect(resumed.stderr).not.toMatch(/^error/m);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("The report, at last.\n");
  });

  it("serves --program with only the entry's env, recording into OPENPROGRAM_HOME", async () => {
    const script = home.scripted(["Hello, Ada!"]);
    const env = { OPENPROGRAM_HOME: home.home, OPENPROGRAM_PROVIDER: "scripted", ...script.env };
    const client = await connect({ args: ["mcp", "--program", `${program("greeter.mjs")}#greet`], env });
    try {
      const result = await client.callTool({ name: "greet", arguments: { name: "Ada" } });
      expect(result.structuredContent).toMatchObject({ ok: true, result: "Hello, Ada!" });
      const { session_id: sessionId } = result.structuredContent as { session_id: string };
      const shown = await runCli(["sessions", "show", sessionId, "--json"], { env: home.env() });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toContain('"source":"mcp"');
    } finally {
      await client.close();
    }
  });

  it("serves the programs of OPENPROGRAM_PROGRAMS without --program, and says what it needs without either", async () => {
    const env = {
      OPENPROGRAM_HOME: home.home,
      OPENPROGRAM_PROVIDER: "none",
      OPENPROGRAM_PROGRAMS: `${program("greeter.mjs")}#greet, ${program("two-programs.mjs")}#second`,
    };
    const none = await runCli(["mcp"], { env: home.env({ OPENPROGRAM_PROVIDER: "none" }) });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("openprogram mcp needs --program <file>#<export>");
    expect(none.stderr).toContain("OPENPROGRAM_PROGRAMS");
    const client = await connect({ args: ["mcp"], env });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((entry) => entry.name)).toEqual(["greet", "second"]);
    } finally {
      await client.close();
    }
  });
});
