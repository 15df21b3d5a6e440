// Crash safety (issue 8 section 3): kill -9 the dispatcher (`openprogram
// serve`) while 20 sessions are mid-turn; every session must read back
// consistent, with nothing stuck, and continue with --session.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { doctorSessions, SessionDB } from "@openprogram/session-context";
import { findFreePort } from "@openprogram/session-context/testing";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";

const CLI_BIN = fileURLToPath(new URL("../../../packages/cli/dist/bin.js", import.meta.url));
const PROGRAM_FILE = fileURLToPath(new URL("../programs/long-turn.mjs", import.meta.url));
const SESSIONS = 20;
const ROUNDS = 3;

const home = mkdtempSync(join(tmpdir(), "openprogram-dispatcher-kill-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const root = join(home, "sessions");
const script = join(home, "replies.json");
writeFileSync(
  script,
  JSON.stringify(Array.from({ length: 20_000 }, (_, index) => ({ reply: `done ${index}`, delayMs: 20 }))),
);
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: home,
  OPENPROGRAM_HOME: home,
  OPENPROGRAM_PROVIDER: "scripted",
  OPENPROGRAM_SCRIPT: script,
};

async function startServer(): Promise<{ server: ChildProcess; port: number; exited: Promise<unknown> }> {
  const port = await findFreePort();
  const server = spawn(
    process.execPath,
    [CLI_BIN, "serve", "--port", String(port), "--no-token", "--program", `${PROGRAM_FILE}#work`],
    { env, stdio: "ignore" },
  );
  const exited = new Promise((resolve) => server.on("exit", resolve));
  for (let attempt = 0; attempt < 200; attempt++) {
    if (
      await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (answer) => answer.ok,
        () => false,
      )
    )
      return { server, port, exited };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("openprogram serve did not come up");
}

/** Starts a turn in a new session over its own socket; resolves with the session id once the turn is recording. */
function startTurn(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { headers: { origin: `http://127.0.0.1:${port}` } });
    let sessionId: string | null = null;
    socket.on("error", () => undefined);
    socket.on("open", () => socket.send(JSON.stringify({ type: "run", program: "work", input: { steps: 400 } })));
    socket.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString()) as { type: string; session_id?: string; node?: { name: string } };
      if (frame.type === "session") sessionId = frame.session_id ?? null;
      if (frame.type === "node" && frame.node?.name === "step" && sessionId) resolve(sessionId);
      if (frame.type === "turn_failed" || frame.type === "error") reject(new Error(JSON.stringify(frame)));
    });
  });
}

describe("kill -9 of the dispatcher during the turns of 20 sessions", () => {
  it(`leaves every session consistent and continuable, ${ROUNDS} times`, async () => {
    const all: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const { server, port, exited } = await startServer();
      const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => startTurn(port)));
      // Let the turns run a little further, by a different amount each round, then kill.
      await new Promise((resolve) => setTimeout(resolve, 50 + round * 120));
      server.kill("SIGKILL");
      await exited;
      all.push(...sessions);

      const db = new SessionDB({ root });
      for (const sessionId of sessions) {
        // Reads report what was recorded; opening the session for a turn (as the next dispatcher does) recovers it.
        expect((await db.getSession(sessionId))?.status).toBe("running");
        await db.openSession(sessionId);
        const record = await db.getSession(sessionId);
        expect(["running", "needs_input"], `status of ${sessionId}`).not.toContain(record?.status);
        const seqs = new Set<number>();
        for (const file of readdirSync(join(root, sessionId, "history")).filter((name) => !name.startsWith("."))) {
          const node = JSON.parse(readFileSync(join(root, sessionId, "history", file), "utf8")) as { seq: number };
          expect(seqs.has(node.seq), `duplicate seq ${node.seq} in ${sessionId}`).toBe(false);
          seqs.add(node.seq);
        }
        const history = await db.readHistory(sessionId);
        expect(history.problems).toEqual([]);
        expect(
          history.nodes.some((node) => node.metadata.status === "interrupted"),
          `${sessionId} was killed mid-turn: ${JSON.stringify({ record, nodes: history.nodes.map((node) => [node.name, node.metadata.status]), leases: readdirSync(join(root, sessionId, ".state")) })}`,
        ).toBe(true);
        expect(
          history.nodes.filter((node) => node.metadata.status === "running" || node.metadata.status === "waiting"),
        ).toEqual([]);
      }
    }
    // Every session continues, from the command line this time.
    for (const sessionId of all.slice(0, 5)) {
      const before = (await new SessionDB({ root }).loadNodes(sessionId)).length;
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(
          process.execPath,
          [CLI_BIN, "run", `${PROGRAM_FILE}#work`, "--input", '{"steps":2}', "--session", sessionId],
          { env: { ...env }, stdio: "ignore" },
        );
        child.on("exit", resolve);
      });
      expect(code).toBe(0);
      expect((await new SessionDB({ root }).loadNodes(sessionId)).length).toBe(before + 5);
    }
    const report = await doctorSessions({ db: new SessionDB({ root }) });
    expect(report.findings.filter((finding) => finding.severity === "error")).toEqual([]);
  });
});
