// `run --mcp <server>`: a server's tools offered in every exec of the turn, for a program that asks for none;
// `resume --mcp` gives them again after a kill -9 in the middle of one.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCliHome, program, runCli, sessionIdFrom, spawnCli, waitFor, type CliHome } from "./helpers/cli.js";

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

const requests = (log: string) =>
  readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as {
          messages: Array<{ role: string; content: unknown }>;
          tools?: Array<{ function: { name: string } }>;
        },
    );

const toolMessages = (log: string, request: number): unknown[] =>
  (requests(log)[request]?.messages ?? []).filter((message) => message.role === "tool").map((m) => m.content);

describe("openprogram run --mcp", () => {
  it("offers a server's tools to a program's exec, asking before those not allowed (here refused)", async () => {
    notesConfig({ allow: ["add"] });
    const script = home.scripted([
      {
        toolCalls: [
          { name: "notes__add", arguments: { a: 2, b: 3 } },
          { name: "notes__fail", arguments: {} },
        ],
      },
      "5, and the other tool was refused.",
    ]);
    const answers = home.file("answers.json", JSON.stringify(["no"]));
    const result = await runCli(["run", program("mcp-plain.mjs"), "--mcp", "notes", "--answers", answers], {
      env: home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env }),
      cwd: home.home,
    });
    expect(result.stderr).not.toMatch(/^error \[/m);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("5, and the other tool was refused.\n");
    expect(requests(script.log)[0]?.tools?.map((entry) => entry.function.name)).toEqual(
      expect.arrayContaining(["notes__add", "notes__fail", "notes__crash"]),
    );
    // The refused tool never reached the server; the model reads why.
    expect(effectLines()).toEqual(["add 2 3"]);
    expect(toolMessages(script.log, 1)).toEqual([
      "5",
      expect.stringMatching(/^\[error\] The user did not allow notes__fail to run/),
    ]);
  });

  it("refuses --mcp with --isolate, and an unknown server before anything runs", async () => {
    notesConfig();
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...home.scripted(["never"]).env });
    const isolated = await runCli(["run", program("mcp-plain.mjs"), "--mcp", "notes", "--isolate"], { env });
    expect(isolated.code).toBe(2);
    expect(isolated.stderr).toMatch(/error \[usage\]: option '--mcp <server>' cannot be used with option '--isolate'/);
    const unknown = await runCli(["run", program("mcp-plain.mjs"), "--mcp", "github", "--json"], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toContain('"code":"mcp_server_unknown"');
    expect(unknown.stdout).toContain('"session_id":null');
    expect(effectLines()).toEqual([]);
  });

  it("a turn killed -9 in the middle of a --mcp tool resumes with --mcp without running that tool again", async () => {
    notesConfig({ allow: ["add", "write.note"] }, { NOTES_HANG_ON: "milk" });
    const noteName = await cleanedName();
    const script = home.scripted([{ toolCalls: [{ name: noteName, arguments: { text: "milk" } }] }]);
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env });
    const child = spawnCli(["run", program("mcp-plain.mjs"), "--mcp", "notes"], { env, cwd: home.home });
    child.stdin.end();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => effectLines().includes("write milk"), "the note tool to start", 30_000);
    const sessionId = sessionIdFrom(stderr);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-(child.pid as number), "SIGKILL");
    await exited;

    const after = home.scripted([
      { toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 3 } }] },
      "Noted (maybe), and 5.",
    ]);
    const resumed = await runCli(["resume", sessionId, "--mcp", "notes", "--program", program("mcp-plain.mjs")], {
      env: { ...env, ...after.env },
      cwd: home.home,
    });
    expect(resumed.stderr).not.toMatch(/^error/m);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("Noted (maybe), and 5.\n");
    expect(effectLines()).toEqual(["write milk", "add 2 3"]);
    const messages = toolMessages(after.log, 1);
    expect(messages[0]).toMatch(new RegExp(`^\\[error\\] ${noteName} was running when the turn was interrupted`));
    expect(messages[1]).toBe("5");
  });

  it("a read-only MCP tool running at a kill -9 runs again on resume, and the model gets its result", async () => {
    notesConfig({ allow: ["add"] }, { NOTES_HANG_ON_ADD: "2+3" });
    const script = home.scripted([{ toolCalls: [{ name: "notes__add", arguments: { a: 2, b: 3 } }] }]);
    const env = home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env });
    const child = spawnCli(["run", program("mcp-plain.mjs"), "--mcp", "notes"], { env, cwd: home.home });
    child.stdin.end();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    await waitFor(() => effectLines().includes("add 2 3"), "the add tool to start", 30_000);
    const sessionId = sessionIdFrom(stderr);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-(child.pid as number), "SIGKILL");
    await exited;

    notesConfig({ allow: ["add"] });
    const after = home.scripted(["5 it is."]);
    const resumed = await runCli(["resume", sessionId, "--mcp", "notes", "--program", program("mcp-plain.mjs")], {
      env: { ...env, ...after.env },
      cwd: home.home,
    });
    expect(resumed.stderr).not.toMatch(/^error/m);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe("5 it is.\n");
    // The server marks add read-only: run again, not refused as interrupted.
    expect(effectLines()).toEqual(["add 2 3", "add 2 3"]);
    expect(toolMessages(after.log, 0)).toEqual(["5"]);
  });

  it("leaves no MCP server running after the command, closed or not by the program", async () => {
    const pids = join(home.home, "pids.log");
    notesConfig({ allow: ["add"] }, { NOTES_PID_FILE: pids });
    // mcp-notes.mjs starts the server itself and never closes it: the exit hook stops it.
    for (const args of [
      ["run", program("mcp-notes.mjs")],
      ["run", program("mcp-plain.mjs"), "--mcp", "notes"],
    ]) {
      const script = home.scripted(["Nothing to note."]);
      const result = await runCli(args, { env: home.env({ OPENPROGRAM_PROVIDER: "scripted", ...script.env }) });
      expect(result.code).toBe(0);
    }
    const started = readFileSync(pids, "utf8").trim().split("\n").map(Number);
    expect(started).toHaveLength(2);
    const alive = (pid: number): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => started.every((pid) => !alive(pid)), "the MCP servers to exit", 10_000);
  });
});

/** The name the model sees for write.note under the default prefix, asked of the server as `run --mcp` would. */
async function cleanedName(): Promise<string> {
  const { mcpTools, closeMcpServers } = await import("@openprogram/mcp");
  const tools = await mcpTools("notes", {
    config: { command: process.execPath, args: [NOTES_SERVER] },
    only: ["write.note"],
  });
  await closeMcpServers();
  return tools[0]?.name ?? "?";
}
