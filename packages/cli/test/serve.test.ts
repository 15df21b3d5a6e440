import { readFileSync, statSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import type { ServerFrame } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { afterEach, describe, expect, it } from "vitest";
import { program, readRequestLog, runCli, stopCliProcesses, waitFor, startServe, useCliHome } from "./helpers/cli.js";

/** Any frame or log line, read field by field. */
type Json = Record<string, unknown> & { type?: string; event?: string };

const home = useCliHome();

afterEach(stopCliProcesses);

/** The `page` line `serve` prints right after `start` when it generated (or reused) the token; waits for it. */
async function pageLine(lines: () => Json[]): Promise<Json & { token: string }> {
  await waitFor(() => lines().some((line) => line.event === "page"), "the page line");
  const page = lines().find((line) => line.event === "page") as Json;
  return { ...page, token: new URL(String(page.url)).searchParams.get("token") ?? "" };
}

/** The WebSocket URL with the token of the `page` line. */
async function wsUrlWithToken(start: Json, lines: () => Json[]): Promise<string> {
  return `${String(start.ws_url)}?token=${(await pageLine(lines)).token}`;
}

/** The HTTP status a WebSocket upgrade without a token gets. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    });
    request.on("response", (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("upgrade", (response, socket) => {
      socket.destroy();
      resolve(response.statusCode ?? 101);
    });
    request.on("error", reject);
    request.end();
  });
}

/** Connects to the dispatcher; for each step sends its frame and waits for a frame of one of `until`; returns every frame received. */
async function wsSession(
  url: string,
  steps: Array<{ send: Json; until: Array<ServerFrame["type"]> }>,
): Promise<Json[]> {
  const client = await TestClient.connect(url);
  try {
    for (const step of steps) {
      client.send(step.send);
      await client.next(step.until);
    }
    return client.frames;
  } finally {
    client.close();
  }
}

describe("openprogram serve", () => {
  it("serves research plus the --program modules (JS and TypeScript), runs one over WebSocket in sessionContext, and stops on SIGTERM", async () => {
    const { env, log } = home.scripted(["Served summary."]);
    const { child, run, start, lines } = await startServe(
      ["--program", `${program("summarize.mjs")}#summarize`, "--program", program("research-notes.ts")],
      { env: home.env(env) },
    );
    expect(start.programs).toEqual(expect.arrayContaining(["research", "summarize", "write_notes"]));
    expect(start.token).toBe("required");
    const url = String(start.url);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);

    const frames = await wsSession(await wsUrlWithToken(start, lines), [
      { send: { type: "list_programs" }, until: ["programs", "error"] },
      {
        send: { type: "run", program: "summarize", input: { text: "served text" } },
        until: ["turn_done", "turn_failed", "error"],
      },
    ]);
    const programs = frames.find((frame) => frame.type === "programs")?.programs as Array<{
      name: string;
      doc: string;
    }>;
    expect(programs.find((entry) => entry.name === "summarize")?.doc).toBe(
      "Summarize the text in one sentence of plain English. Never add facts.",
    );
    const done = frames.find((frame) => frame.type === "turn_done");
    expect(done?.result).toBe("Served summary.");
    expect(readRequestLog(log)[0]?.messages[0]).toEqual({
      role: "system",
      content: "Summarize the text in one sentence of plain English. Never add facts.",
    });
    const sessionId = String(done?.session_id);
    const nodes = await home.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.name, node.metadata.status])).toEqual([
      ["summarize", "completed"],
      ["scripted", "completed"],
    ]);
    expect((await home.db.getSession(sessionId))?.source).toBe("web");

    child.kill("SIGTERM");
    const result = await run;
    expect(result.code).toBe(0);
  });

  it("requires a token by default: generated once, kept 0600 under OPENPROGRAM_HOME, printed in the page's URL, reused", async () => {
    const first = await startServe([], { env: home.env() });
    const page = await pageLine(first.lines);
    const token = page.token;
    const tokenFile = join(home.home, "serve-token");
    expect(page.token_file).toBe(tokenFile);
    expect(readFileSync(tokenFile, "utf8")).toBe(`${token}\n`);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    // Printed once: only the page line carries it, never the other log lines.
    expect(first.run.output().stdout.split(token).length - 1).toBe(1);
    expect(await upgradeStatus(`${String(first.start.url)}/ws`)).toBe(401);
    const frames = await wsSession(await wsUrlWithToken(first.start, first.lines), [
      { send: { type: "list_programs" }, until: ["programs", "error"] },
    ]);
    expect(frames.some((frame) => frame.type === "programs")).toBe(true);
    first.child.kill("SIGTERM");
    expect((await first.run).code).toBe(0);

    // The next start reuses it; --token-file and OPENPROGRAM_TOKEN_FILE replace it, and are never printed.
    const again = await startServe([], { env: home.env() });
    expect((await pageLine(again.lines)).token).toBe(token);
    again.child.kill("SIGTERM");
    expect((await again.run).code).toBe(0);
    const ownFile = join(home.home, "own-token");
    writeFileSync(ownFile, "own-token-0123456789abcdef\n", { mode: 0o600 });
    const own = await startServe(["--token-file", ownFile], { env: home.env() });
    // What serve logs right after start comes before the first turn's lines: wait for the connection to be logged.
    expect(own.run.output().stdout).not.toContain("own-token-0123456789abcdef");
    const ownFrames = await wsSession(`${String(own.start.ws_url)}?token=own-token-0123456789abcdef`, [
      { send: { type: "list_programs" }, until: ["programs", "error"] },
    ]);
    expect(ownFrames.some((frame) => frame.type === "programs")).toBe(true);
    expect(own.lines().some((line) => line.event === "page")).toBe(false);
    own.child.kill("SIGTERM");
    expect((await own.run).code).toBe(0);
  });

  it("takes its programs from OPENPROGRAM_PROGRAMS when no --program is given (for service managers)", async () => {
    const { child, run, start } = await startServe([], {
      env: home.env({
        OPENPROGRAM_PROGRAMS: `${program("summarize.mjs")}#summarize, ${program("where-am-i.mjs")}#whereAmI`,
      }),
    });
    expect(start.programs).toEqual(expect.arrayContaining(["research", "summarize", "where_am_i"]));
    child.kill("SIGTERM");
    expect((await run).code).toBe(0);
  });

  it("--isolate runs each --program in a child process", async () => {
    const { child, run, start } = await startServe(
      ["--isolate", "--no-token", "--program", `${program("where-am-i.mjs")}#whereAmI`],
      { env: home.env() },
    );
    expect(start.programs).toEqual(expect.arrayContaining(["research", "where_am_i"]));
    expect(start.token).toBe("not required (loopback only)");
    const frames = await wsSession(String(start.ws_url), [
      { send: { type: "run", program: "where_am_i", input: {} }, until: ["turn_done", "turn_failed", "error"] },
    ]);
    const done = frames.find((frame) => frame.type === "turn_done");
    expect(done, JSON.stringify(frames)).toBeDefined();
    const result = done?.result as { pid: number; session: string };
    expect(result.pid).not.toBe(child.pid);
    expect(result.pid).not.toBe(start.pid);
    expect(result.session).toBe(done?.session_id);
    child.kill("SIGTERM");
    expect((await run).code).toBe(0);
  });

  it.each([
    {
      name: "a --program module that does not exist",
      args: ["--program", "./nope.mjs#x"],
      message: /^error \[invalid_input\]: Module not found: .*nope\.mjs/m,
    },
    {
      name: "a --program export that is not agentic",
      args: ["--program", `${program("plain-function.mjs")}#shout`],
      message: /^error \[not_agentic_function\]: Export 'shout'/m,
    },
    {
      name: "two --program functions with the same name",
      args: ["--program", `${program("two-programs.mjs")}#first`, "--program", `${program("two-programs.mjs")}#first`],
      message: /^error \[invalid_input\]: Two programs are named 'first'/m,
    },
    {
      name: "a --port that is not a number",
      args: ["--port", "eighty"],
      message: /^error \[invalid_input\]: --port "eighty" must be an integer from 0 to 65535/m,
    },
    {
      name: "a public --host with --no-token",
      args: ["--host", "0.0.0.0", "--no-token"],
      message:
        /^error \[invalid_input\]: --host 0\.0\.0\.0 is not a loopback address, so the dispatcher requires a token/m,
    },
    {
      name: "a --token-file that does not exist",
      args: ["--token-file", "/nonexistent/token"],
      message: /^error \[invalid_input\]: Cannot read --token-file \/nonexistent\/token: ENOENT\./m,
    },
    {
      name: "a --max-turns of 0",
      args: ["--max-turns", "0"],
      message: /^error \[invalid_input\]: --max-turns 0 must be an integer from 1/m,
    },
  ])("bad configuration ($name) exits 2 before listening", async ({ args, message }) => {
    const result = await runCli(["serve", ...args], { env: home.env() });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
    expect(result.stdout).not.toContain('"event":"start"');
  });
});
