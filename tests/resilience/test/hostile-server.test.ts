// What an independent hostile probe broke in the server (issue 13), each
// class tried against the real server over loopback: server-wide limits
// (turns, connections per address and in total, slow and idle connections),
// delete_session racing a turn 50 times, a second local user without the
// token, and /readyz and the Origin check.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDispatcher, type Dispatcher, type DispatcherOptions, type LogEntry } from "@openprogram/dispatcher";
import type { AgenticFunction } from "@openprogram/session-context";
import { isValidSessionId, SessionDB } from "@openprogram/session-context/store";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  eventually,
  get,
  Peer,
  PROGRAMS,
  rawExchange,
  startServe,
  type Frame,
  type ServedChild,
} from "./helpers/hostile.js";

const { hold, quick } = (await import(PROGRAMS)) as Record<"hold" | "quick", AgenticFunction<never, unknown>>;

const scratch = mkdtempSync(join(tmpdir(), "openprogram-hostile-server-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let homes = 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await (cleanups.pop() as () => Promise<void> | void)();
});

/** A dispatcher over a fresh store, closed after the test; its log entries are kept. */
async function dispatcherWith(
  options: Omit<DispatcherOptions, "port" | "db">,
): Promise<{ dispatcher: Dispatcher; db: SessionDB; root: string; logs: LogEntry[] }> {
  const root = join(scratch, `home-${homes++}`, "sessions");
  const db = new SessionDB({ root });
  const logs: LogEntry[] = [];
  const dispatcher = await createDispatcher({
    runtime: null,
    ...options,
    port: 0,
    db,
    log: (entry) => logs.push(entry),
  });
  cleanups.push(() => dispatcher.close());
  return { dispatcher, db, root, logs };
}

async function peer(url: string, options?: Parameters<typeof Peer.open>[1]): Promise<Peer> {
  const opened = await Peer.open(url, options);
  cleanups.push(() => opened.close());
  return opened;
}

/** Starts `openprogram serve` (stopped after the test) with a fresh home and no model. */
async function served(args: string[]): Promise<ServedChild & { home: string }> {
  const home = join(scratch, `home-${homes++}`);
  const child = await startServe(args, {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    OPENPROGRAM_HOME: home,
    OPENPROGRAM_PROVIDER: "none",
  });
  cleanups.push(() => child.stop());
  return { ...child, home };
}

function errorOf(frame: Frame): { code: string; message: string } {
  return frame as unknown as { code: string; message: string };
}

describe("server-wide limits", () => {
  it("refuses a turn beyond maxConcurrentTurns with server_busy, across connections, and takes one once a turn ends", async () => {
    const { dispatcher } = await dispatcherWith({ programs: { hold, quick }, limits: { maxConcurrentTurns: 3 } });
    const first = await peer(dispatcher.wsUrl);
    const second = await peer(dispatcher.wsUrl);
    const third = await peer(dispatcher.wsUrl);
    first.send({ type: "run", program: "hold", client_msg_id: "h1" });
    first.send({ type: "run", program: "hold", client_msg_id: "h2" });
    second.send({ type: "run", program: "hold", client_msg_id: "h3" });
    const held = await first.waitFor((frame) => frame.type === "session" && frame.client_msg_id === "h1", "h1");
    await first.waitFor((frame) => frame.type === "session" && frame.client_msg_id === "h2", "h2");
    await second.waitFor((frame) => frame.type === "session" && frame.client_msg_id === "h3", "h3");

    third.send({ type: "run", program: "quick", client_msg_id: "q1" });
    const refused = errorOf(await third.waitFor((frame) => frame.type === "error" && frame.ref === "q1", "q1 refused"));
    expect(refused.code).toBe("server_busy");
    expect(refused.message).toContain("already runs 3 turns");
    expect(refused.message).toContain("--max-turns");
    // The refused turn created nothing.
    expect(third.frames.some((frame) => frame.type === "session")).toBe(false);

    first.send({ type: "stop", session_id: held.session_id });
    await first.waitFor((frame) => frame.type === "turn_failed" && frame.client_msg_id === "h1", "h1 cancelled");
    third.send({ type: "run", program: "quick", client_msg_id: "q2" });
    await third.waitFor((frame) => frame.type === "turn_done" && frame.client_msg_id === "q2", "q2 done");
  });

  it("caps connections per address and in total: HTTP 503 too_many_connections, WebSocket or not; a closed one frees its slot", async () => {
    // No loopback health slots here: they let a local /healthz past the caps (issue 30 item 12, half-sent.test.ts).
    const { dispatcher, logs } = await dispatcherWith({
      limits: { maxConnections: 5, maxConnectionsPerAddress: 3, loopbackHealthSlots: 0 },
    });
    const fromOne = [];
    for (let index = 0; index < 3; index++) fromOne.push(await peer(dispatcher.wsUrl, { localAddress: "127.0.0.1" }));
    for (const attempt of [
      get(`${dispatcher.url}/ws`, { upgrade: true, localAddress: "127.0.0.1" }),
      get(`${dispatcher.url}/healthz`, { localAddress: "127.0.0.1" }),
    ]) {
      const answer = await attempt;
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.body)).toMatchObject({
        error: {
          code: "too_many_connections",
          message: expect.stringContaining("--max-connections-per-address") as unknown,
        },
      });
    }
    // Another address still gets in, up to the total.
    await peer(dispatcher.wsUrl, { localAddress: "127.0.0.2" });
    await peer(dispatcher.wsUrl, { localAddress: "127.0.0.2" });
    const overTotal = await get(`${dispatcher.url}/healthz`, { localAddress: "127.0.0.3" });
    expect(overTotal.status).toBe(503);
    expect(overTotal.body).toContain("5 connections open, its limit (--max-connections)");
    expect(logs.filter((entry) => entry.event === "connection_refused").map((entry) => entry.reason)).toEqual([
      "per_address",
      "per_address",
      "total",
    ]);
    (fromOne[0] as Peer).close();
    await eventually(
      async () => (await get(`${dispatcher.url}/healthz`, { localAddress: "127.0.0.3" })).status === 200,
      "a closed connection frees its slot",
    );
  });

  it("closes connections that send no request, half a request, or idle on keep-alive; idle WebSockets without a turn", async () => {
    const { dispatcher } = await dispatcherWith({
      programs: { hold },
      limits: { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, wsIdleTimeoutMs: 400 },
    });
    const { port } = dispatcher;
    // Each exchange resolves only when the server closes the connection (the test would time out otherwise). With no
    // token set every connection is unauthenticated: its header deadline (issue 30 item 12, here the same 300 ms)
    // closes it without an answer, or Node's own header timeout answers 408 first.
    const closedOrTimedOut = /^(HTTP\/1\.1 408[\s\S]*)?$/;
    expect(await rawExchange(port, null)).toMatch(closedOrTimedOut);
    expect(await rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")).toMatch(closedOrTimedOut);
    const keptAlive = await rawExchange(
      port,
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n",
    );
    expect(keptAlive).toMatch(/^HTTP\/1\.1 200 OK/);

    const silent = await peer(dispatcher.wsUrl);
    const working = await peer(dispatcher.wsUrl);
    working.send({ type: "run", program: "hold", client_msg_id: "w" });
    const session = await working.waitFor((frame) => frame.type === "session", "the held turn");
    const closed = await silent.waitClosed();
    expect(closed.code).toBe(1000);
    expect(closed.reason).toBe("closed after 400 ms without frames");
    // Silent too, but with a turn of its own running: kept open.
    expect(working.closed).toBeNull();
    working.send({ type: "stop", session_id: session.session_id });
    await working.waitFor((frame) => frame.type === "turn_failed", "the turn to end");
    expect((await working.waitClosed()).code).toBe(1000);
    expect((await get(`${dispatcher.url}/healthz`)).status).toBe(200);
  });

  it("takes its limits from `openprogram serve` flags", async () => {
    const server = await served(["--no-token", "--max-connections-per-address", "2", "--headers-timeout-ms", "400"]);
    const start = await server.event("start");
    expect(start.limits).toMatchObject({ maxConnectionsPerAddress: 2, headersTimeoutMs: 400 });
    const wsUrl = `ws://127.0.0.1:${server.port}/ws`;
    await peer(wsUrl);
    await peer(wsUrl);
    const third = await get(`${server.url}/ws`, { upgrade: true });
    expect(third.status).toBe(503);
    expect(third.body).toContain("too_many_connections");
  });
});

describe("delete_session racing a turn", () => {
  it("50 times over WebSocket: no ghost session, and every turn that started ends with turn_done or turn_failed", async () => {
    const { dispatcher, db, root } = await dispatcherWith({ programs: { quick } });
    const runner = await peer(dispatcher.wsUrl);
    const deleter = await peer(dispatcher.wsUrl);
    const outcomes = { ran: 0, runRefused: 0, deleted: 0, deleteRefused: 0 };
    for (let round = 0; round < 50; round++) {
      runner.send({ type: "run", program: "quick", input: { text: `make ${round}` }, client_msg_id: `make-${round}` });
      const made = await runner.waitFor(
        (frame) => frame.type === "turn_done" && frame.client_msg_id === `make-${round}`,
        `session ${round}`,
      );
      const sessionId = String(made.session_id);
      const run = { type: "run", program: "quick", session_id: sessionId, client_msg_id: `race-${round}` };
      const remove = { type: "delete_session", session_id: sessionId, client_msg_id: `delete-${round}` };
      // Both in flight at once, in either order, the second 0-4 ms after the first (while the turn starts, runs
      // or commits).
      const [firstSend, secondSend] =
        round % 2 === 0
          ? [() => runner.send(run), () => deleter.send(remove)]
          : [() => deleter.send(remove), () => runner.send(run)];
      firstSend();
      if (round % 5 > 0) await new Promise((resolve) => setTimeout(resolve, round % 5));
      secondSend();
      const runAnswer = await runner.waitFor(
        (frame) =>
          (frame.type === "error" && frame.ref === `race-${round}`) ||
          (frame.type === "session" && frame.client_msg_id === `race-${round}`),
        `the run of round ${round}`,
      );
      if (runAnswer.type === "session") {
        const ends = await runner.waitFor(
          (frame) =>
            (frame.type === "turn_done" || frame.type === "turn_failed") && frame.turn_id === runAnswer.turn_id,
          `the end of the turn of round ${round}`,
        );
        expect(ends.client_msg_id).toBe(`race-${round}`);
        outcomes.ran++;
      } else {
        expect(errorOf(runAnswer).code).toBe("session_busy");
        outcomes.runRefused++;
      }
      const deleteAnswer = await deleter.waitFor(
        (frame) =>
          (frame.type === "error" && frame.ref === `delete-${round}`) ||
          (frame.type === "session_deleted" && frame.session_id === sessionId),
        `the delete of round ${round}`,
      );
      if (deleteAnswer.type === "session_deleted") outcomes.deleted++;
      else {
        expect(errorOf(deleteAnswer).code).toBe("session_busy");
        outcomes.deleteRefused++;
      }
    }
    // Every turn that began ended, exactly once.
    const began = runner.frames.filter((frame) => frame.type === "session");
    for (const start of began) {
      const ends = runner.frames.filter(
        (frame) => (frame.type === "turn_done" || frame.type === "turn_failed") && frame.turn_id === start.turn_id,
      );
      expect(ends, `turn ${String(start.turn_id)}`).toHaveLength(1);
    }
    // No ghost: every listed session is on disk and idle; every session on disk is listed.
    const listed = await db.listSessions({ includeArchived: true });
    for (const record of listed) {
      expect(existsSync(join(root, record.id, "meta.json")), `${record.id} is on disk`).toBe(true);
      expect(record.status, record.id).toBe("idle");
    }
    const onDisk = readdirSync(root).filter((name) => isValidSessionId(name) && name !== "index.json");
    expect(onDisk.sort()).toEqual(listed.map((record) => record.id).sort());
    expect(readdirSync(root).filter((name) => name.startsWith(".deleted-"))).toEqual([]);
    expect(outcomes.ran + outcomes.runRefused).toBe(50);
    expect(outcomes.deleted + outcomes.deleteRefused).toBe(50);
    process.stdout.write(`delete/run races: ${JSON.stringify(outcomes)}\n`);
  }, 180_000);
});

describe("trust on one machine", () => {
  it("serve requires a token by default; a second local user without it is refused, and cannot read it", async () => {
    const server = await served([]);
    const page = await server.event("page");
    const tokenFile = join(server.home, "serve-token");
    const token = readFileSync(tokenFile, "utf8").trim();
    expect(page.url).toBe(`${server.url}/?token=${token}`);
    expect((await get(`${server.url}/ws`, { upgrade: true })).status).toBe(401);
    expect((await get(`${server.url}/ws?token=${token}`, { upgrade: true })).status).toBe(101);

    if (process.getuid?.() !== 0) return; // Only root can start a process as another user; the checks above hold for all.
    const open = await served(["--no-token"]);
    const asNobody = (wsUrl: string): Promise<{ read: string; status?: number; error?: string }> =>
      new Promise((resolve, reject) => {
        const script = `
          const fs = require("node:fs"), http = require("node:http");
          const out = {};
          try { fs.readFileSync(process.argv[1]); out.read = "ok"; } catch (error) { out.read = error.code; }
          const done = () => { process.stdout.write(JSON.stringify(out)); process.exit(0); };
          const request = http.request(process.argv[2], { headers: { Connection: "Upgrade", Upgrade: "websocket",
            "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" } });
          request.on("response", (response) => { out.status = response.statusCode; done(); });
          request.on("upgrade", (response, socket) => { out.status = response.statusCode; socket.destroy(); done(); });
          request.on("error", (error) => { out.error = error.code; done(); });
          request.end();`;
        const child = spawn(process.execPath, ["-e", script, tokenFile, wsUrl], {
          uid: 65534,
          gid: 65534,
          cwd: "/",
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.on("error", reject);
        child.on("exit", () => resolve(JSON.parse(output || "{}") as { read: string; status?: number }));
      });
    const refused = await asNobody(`${server.url}/ws`);
    expect(refused).toEqual({ read: "EACCES", status: 401 });
    // The same user reaches a --no-token server: the refusal above is the token's doing.
    expect((await asNobody(`${open.url}/ws`)).status).toBe(101);
  });

  it("/readyz gives the status to anyone and the details only with the token; the Origin must match scheme, host and port", async () => {
    const server = await served([]);
    const token = readFileSync(join(server.home, "serve-token"), "utf8").trim();
    const anonymous = await get(`${server.url}/readyz`, { headers: { Host: `rebind.example:${server.port}` } });
    expect(JSON.parse(anonymous.body)).toEqual({ status: "ready" });
    expect(anonymous.body).not.toContain(server.home);
    const detailed = JSON.parse(
      (await get(`${server.url}/readyz`, { headers: { Authorization: `Bearer ${token}` } })).body,
    ) as { checks: { git: { detail: string }; store: { detail: string } } };
    expect(detailed.checks.git.detail).toMatch(/^git version/);

    const withToken = `${server.url}/ws?token=${token}`;
    for (const [origin, host] of [
      [`https://127.0.0.2:${server.port}`, `127.0.0.2:${server.port}`],
      [`https://127.0.0.1:${server.port}`, `127.0.0.1:${server.port}`],
      [`http://127.0.0.1:${server.port + 1}`, `127.0.0.1:${server.port}`],
    ]) {
      const answer = await get(withToken, {
        upgrade: true,
        headers: { Origin: origin as string, Host: host as string },
      });
      expect(answer.status, origin).toBe(403);
    }
    const own = `http://127.0.0.1:${server.port}`;
    expect((await get(withToken, { upgrade: true, headers: { Origin: own } })).status).toBe(101);
  });
});
