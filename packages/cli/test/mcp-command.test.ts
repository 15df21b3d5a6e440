// `openprogram mcp` as a Claude Desktop-style client starts it: the README's mcpServers block, with only the
// environment such a client gives (the SDK's short inherited list plus the entry's env) and no useful cwd.
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CLI_DIR, createCliHome, program, runCli, type CliHome } from "./helpers/cli.js";

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
