// The probe's cases that held (issue 13), kept as regression tests against
// `openprogram serve` over loopback: token variants, request-target traversal
// sent raw (no client normalises it), hostile session ids in every frame
// that takes one, bind addresses, and a flood of frames on one connection.
// (Origin/Host rebinding and frame limits have theirs in the dispatcher's
// upgrade-security and bad-input tests; random frames in frame-properties.)
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_BIN, get, Peer, rawExchange, startServe, type ServedChild } from "./helpers/hostile.js";

const home = mkdtempSync(join(tmpdir(), "openprogram-hostile-regressions-"));
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  OPENPROGRAM_HOME: home,
  OPENPROGRAM_PROVIDER: "none",
};
let server: ServedChild;
let token: string;

beforeAll(async () => {
  server = await startServe([], env);
  token = readFileSync(join(home, "serve-token"), "utf8").trim();
});
afterAll(async () => {
  await server.stop();
  rmSync(home, { recursive: true, force: true });
});

describe("token variants", () => {
  it("opens the socket for the exact token only", async () => {
    const ws = `${server.url}/ws`;
    const refused: Array<[string, Record<string, string>]> = [
      ["", {}],
      ["?token=", {}],
      [`?token=${token.toUpperCase()}`, {}],
      [`?token=${token.slice(0, -1)}`, {}],
      [`?token=${token}x`, {}],
      [`?token=%20${token}`, {}],
      [`?token=wrong&token=${token}`, {}],
      ["", { Authorization: token }],
      ["", { Authorization: `Basic ${Buffer.from(`user:${token}`).toString("base64")}` }],
      ["", { Authorization: `Bearer ${token} extra` }],
      ["", { Authorization: "Bearer" }],
      ["", { Cookie: `token=${token}` }],
      ["", { "X-Token": token }],
      ["?token=wrong", { Authorization: `Bearer ${token}` }],
    ];
    for (const [query, headers] of refused) {
      const answer = await get(`${ws}${query}`, { upgrade: true, headers });
      expect(answer.status, `${query} ${JSON.stringify(headers)}`).toBe(401);
    }
    for (const [query, headers] of [
      [`?token=${token}`, {}],
      ["", { Authorization: `Bearer ${token}` }],
      ["", { Authorization: `bearer   ${token}` }],
      [`?token=${token}&token=wrong`, {}],
    ] as Array<[string, Record<string, string>]>) {
      expect((await get(`${ws}${query}`, { upgrade: true, headers })).status, query).toBe(101);
    }
  });
});

describe("request targets that try to leave the page's files", () => {
  it("answers 404 (or 400) and never a file's content", async () => {
    const targets = [
      "/../package.json",
      "/../../../../etc/passwd",
      "/..%2f..%2fetc%2fpasswd",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/%252e%252e/etc/passwd",
      "/..\\..\\etc\\passwd",
      "//etc/passwd",
      "/./../app.js/../../package.json",
      "/app.js%00.html",
      "/index.html/",
      "/web/index.html",
      "/dist/index.js",
      "/node_modules/ws/package.json",
      "/src/create-dispatcher.ts",
      "/.git/config",
      "/%c0%ae%c0%ae/etc/passwd",
      "http://127.0.0.1/../../etc/passwd",
      "*",
    ];
    for (const target of targets) {
      const answer = await rawExchange(
        server.port,
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      expect(answer, target).toMatch(/^HTTP\/1\.1 (400|404) /);
      expect(answer, target).not.toMatch(/root:|"name": "@openprogram|\[core\]|import /);
    }
    expect(
      (await rawExchange(server.port, "GET /app.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")).slice(0, 15),
    ).toBe("HTTP/1.1 200 OK");
  });
});

describe("hostile session ids", () => {
  it("are refused with invalid_session_id by every frame that takes one, and nothing is written outside the root", async () => {
    const peer = await Peer.open(`ws://127.0.0.1:${server.port}/ws?token=${token}`);
    const ids = [
      "..",
      "../escape",
      "a/b",
      "a\\b",
      "/etc",
      ".git",
      ".hidden",
      "nul\u0000byte",
      "x".repeat(129),
      "space id",
      "tab\tid",
      "new\nline",
      "é",
      "%2e%2e",
      "a..b",
      "",
      "<script>",
      "id;rm -rf",
    ];
    const actions = ["chat", "run", "subscribe", "get_session", "delete_session", "stop", "unsubscribe"];
    let ref = 0;
    for (const id of ids) {
      for (const type of actions) {
        const clientMsgId = `id-${ref++}`;
        peer.send({ type, session_id: id, text: "hi", program: "research", client_msg_id: clientMsgId });
        const answer = await peer.waitFor((frame) => frame.ref === clientMsgId, `${type} ${JSON.stringify(id)}`);
        expect(answer.type).toBe("error");
        expect(answer.code, `${type} ${JSON.stringify(id)}`).toBe("invalid_session_id");
      }
    }
    peer.close();
    // Nothing beside the token and the sessions root, and no session under it.
    expect(readdirSync(home).filter((name) => name !== "serve-token" && name !== "sessions")).toEqual([]);
    const root = join(home, "sessions");
    const sessions = existsSync(root)
      ? readdirSync(root).filter((name) => !name.startsWith(".") && name !== "index.json")
      : [];
    expect(sessions).toEqual([]);
  });
});

describe("bind addresses", () => {
  it.each(["0.0.0.0", "::", "192.0.2.10", "[::]"])("refuses %s without a token before listening", async (host) => {
    const result = await new Promise<{ code: number | null; stderr: string; stdout: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI_BIN, "serve", "--no-token", "--host", host, "--port", "0"], { env });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.on("close", (code) => resolve({ code, stderr, stdout }));
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("is not a loopback address, so the dispatcher requires a token");
    expect(result.stdout).not.toContain('"event":"start"');
  });
});

describe("a flood of frames on one connection", () => {
  it("answers every one of 3,000 frames, and the server stays healthy", async () => {
    const peer = await Peer.open(`ws://127.0.0.1:${server.port}/ws?token=${token}`);
    const frames = 3_000;
    for (let index = 0; index < frames; index++) {
      peer.send(
        index % 3 === 0
          ? "not json"
          : { type: index % 3 === 1 ? "list_sessions" : "list_programs", client_msg_id: `f${index}` },
      );
    }
    await peer.waitFor(() => peer.frames.length >= frames + 1, "an answer to every frame");
    const answers = peer.frames.slice(1);
    expect(answers.filter((frame) => frame.type === "error")).toHaveLength(frames / 3);
    expect(answers.filter((frame) => frame.type === "sessions")).toHaveLength(frames / 3);
    expect(answers.filter((frame) => frame.type === "programs")).toHaveLength(frames / 3);
    expect(peer.closed).toBeNull();
    peer.close();
    expect((await get(`${server.url}/healthz`)).status).toBe(200);
  });
});
