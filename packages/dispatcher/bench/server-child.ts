// The server under measurement, in its own process so its RSS is its own and
// the load generator does not share its event loop. Modes: "echo" (a bare
// `ws` echo server: the baseline), "dispatcher" (createDispatcher over a
// temp store and the scripted provider, no artificial latency) and "floor" (a
// bare `ws` server doing only a chat turn's floor of writes: floor-turn.ts). It prints its
// port as one JSON line, then answers IPC requests: rss, core, seed, crash,
// recover, cpu, profile-start, profile-stop, exit.
import { spawn } from "node:child_process";
import { Session as InspectorSession } from "node:inspector";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { sessionContext, chat } from "@openprogram/session-context";
import type { SessionRecord } from "@openprogram/session-context/store";
import { createTempStore, scriptedRuntime } from "@openprogram/session-context/testing";
import { WebSocket, WebSocketServer } from "ws";
import { createDispatcher } from "../src/index.js";
import { FloorStore } from "./floor-turn.js";

/** Messages from the load generator. */
export type ChildRequest =
  | { cmd: "rss" }
  | { cmd: "seed"; sessions: number }
  | { cmd: "crash"; sessionId: string }
  | { cmd: "recover"; sessionId: string }
  | { cmd: "cpu" }
  | { cmd: "profile-start" }
  | { cmd: "profile-stop"; path: string }
  | { cmd: "core"; concurrency: number; turnsPerClient: number }
  | { cmd: "interleaved"; turns: number }
  | { cmd: "paired"; concurrency: number; turnsPerClient: number; rounds: number }
  | { cmd: "verify-floor"; sample: number }
  | { cmd: "exit" };

const mode = process.argv[2];
const replies = Number(process.argv[3] ?? "10000");
const store = createTempStore("openprogram-bench-");
const { runtime } = scriptedRuntime(Array.from({ length: replies }, (_, index) => `reply ${index}`));

async function start(): Promise<{ port: number; wsUrl: string; close: () => Promise<void> }> {
  if (mode === "echo") {
    return bareServer((socket) => socket.on("message", (data) => socket.send((data as Buffer).toString("utf8"))));
  }
  if (mode === "dispatcher") {
    // Every bench client connects from 127.0.0.1: the per-address cap (64) would refuse a round whose clients
    // connect while the last round's sockets are still closing on a loaded machine.
    const dispatcher = await createDispatcher({
      port: 0,
      db: store.db,
      runtime,
      limits: { maxConnectionsPerAddress: 512 },
    });
    return { port: dispatcher.port, wsUrl: dispatcher.wsUrl, close: () => dispatcher.close() };
  }
  if (mode === "floor") return startFloor();
  throw new Error(`server-child: unknown mode ${String(mode)}; use echo, dispatcher or floor.`);
}

/** The floor mode's store, for verify-floor. */
let floorStore: FloorStore | null = null;

/**
 * The floor server: each chat frame is one floor turn (a new session when it names none), answered with a
 * `session` frame and `turn_done`, which is all the bench's clients wait for.
 */
async function startFloor(): Promise<{ port: number; wsUrl: string; close: () => Promise<void> }> {
  const floor = new FloorStore(store.root);
  floorStore = floor;
  let replyNumber = 0;
  return bareServer((socket) =>
    socket.on("message", (data) => {
      const frame = JSON.parse((data as Buffer).toString("utf8")) as { text: string; session_id?: string };
      void (async () => {
        const sessionId = frame.session_id ?? (await floor.create());
        await floor.chatTurn(sessionId, frame.text, `reply ${replyNumber++}`);
        socket.send(JSON.stringify({ type: "session", session_id: sessionId }));
        socket.send(JSON.stringify({ type: "turn_done", session_id: sessionId }));
      })().catch((error: unknown) => socket.send(JSON.stringify({ type: "error", message: String(error) })));
    }),
  );
}

/** A bare `ws` server on loopback whose connections `onConnection` serves (the echo and floor modes). */
async function bareServer(
  onConnection: (socket: WebSocket) => void,
): Promise<{ port: number; wsUrl: string; close: () => Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
  wss.on("connection", onConnection);
  await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
  const address = wss.address() as { port: number };
  return {
    port: address.port,
    wsUrl: `ws://127.0.0.1:${address.port}`,
    // Clients still connected (a round that failed) would hold the close open.
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

/** The core alone, in-process, on the dispatcher's own store: the same chat turns with no dispatcher in front. */
async function coreTurns(
  concurrency: number,
  turnsPerClient: number,
): Promise<{ latencies: number[]; wallMs: number }> {
  const { runtime: coreRuntime } = scriptedRuntime(
    Array.from({ length: concurrency * turnsPerClient }, (_, index) => `reply ${index}`),
  );
  const latencies: number[] = [];
  const began = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      let sessionId: string | undefined;
      for (let turn = 0; turn < turnsPerClient; turn++) {
        const started = performance.now();
        sessionId = await sessionContext(
          { sessionId, db: store.db, runtime: coreRuntime, source: "bench", fromEnvironment: false },
          async (session) => {
            await chat(`message ${turn}`);
            return session.sessionId;
          },
        );
        latencies.push(performance.now() - started);
      }
    }),
  );
  return { latencies, wallMs: performance.now() - began };
}

/**
 * The dispatcher's own cost: one chat turn through it (a client in this same
 * process), then one turn of the core alone, alternately, so that whatever
 * else loads the machine weighs on both equally.
 */
async function interleaved(turns: number): Promise<{ dispatcher: number[]; core: number[] }> {
  const core = createTempStore("openprogram-bench-core-");
  const { runtime: coreRuntime } = scriptedRuntime(Array.from({ length: turns }, (_, index) => `reply ${index}`));
  const socket = new WebSocket(server.wsUrl, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let webSession: string | undefined;
  let coreSession: string | undefined;
  let finished: (() => void) | null = null;
  socket.on("message", (data) => {
    const frame = JSON.parse((data as Buffer).toString("utf8")) as { type: string; session_id?: string };
    if (frame.type === "session") webSession = frame.session_id;
    if (frame.type === "turn_done" || frame.type === "turn_failed" || frame.type === "error") finished?.();
  });
  const result = { dispatcher: [] as number[], core: [] as number[] };
  for (let turn = 0; turn < turns; turn++) {
    let started = performance.now();
    await new Promise<void>((resolve) => {
      finished = resolve;
      socket.send(
        JSON.stringify({ type: "chat", text: `message ${turn}`, ...(webSession ? { session_id: webSession } : {}) }),
      );
    });
    result.dispatcher.push(performance.now() - started);
    started = performance.now();
    coreSession = await sessionContext(
      { sessionId: coreSession, db: core.db, runtime: coreRuntime, source: "bench", fromEnvironment: false },
      async (session) => {
        await chat(`message ${turn}`);
        return session.sessionId;
      },
    );
    result.core.push(performance.now() - started);
  }
  socket.close();
  core.cleanup();
  return result;
}

/** `concurrency` clients in this process, each running `turnsPerClient` chat turns through the dispatcher. */
async function dispatcherTurns(
  concurrency: number,
  turnsPerClient: number,
): Promise<{ latencies: number[]; wallMs: number }> {
  const sockets = await Promise.all(
    Array.from({ length: concurrency }, async () => {
      const socket = new WebSocket(server.wsUrl, { perMessageDeflate: false });
      await new Promise<void>((resolve, reject) => {
        socket.once("open", () => resolve());
        socket.once("error", reject);
      });
      return socket;
    }),
  );
  const latencies: number[] = [];
  const began = performance.now();
  await Promise.all(
    sockets.map(async (socket) => {
      let sessionId: string | undefined;
      for (let turn = 0; turn < turnsPerClient; turn++) {
        const started = performance.now();
        await new Promise<void>((resolve) => {
          const onMessage = (data: Buffer): void => {
            const frame = JSON.parse(data.toString("utf8")) as { type: string; session_id?: string };
            if (frame.type === "session") sessionId = frame.session_id;
            if (frame.type !== "turn_done" && frame.type !== "turn_failed" && frame.type !== "error") return;
            socket.off("message", onMessage);
            resolve();
          };
          socket.on("message", onMessage);
          socket.send(
            JSON.stringify({ type: "chat", text: `message ${turn}`, ...(sessionId ? { session_id: sessionId } : {}) }),
          );
        });
        latencies.push(performance.now() - started);
      }
    }),
  );
  const wallMs = performance.now() - began;
  for (const socket of sockets) socket.close();
  return { latencies, wallMs };
}

/**
 * Rounds through the dispatcher alternating with rounds of the core alone, all
 * in this process; which goes first alternates too, so neither always meets a
 * warmer (or busier) machine.
 */
async function paired(
  concurrency: number,
  turnsPerClient: number,
  rounds: number,
): Promise<{ dispatcher: Round[]; core: Round[] }> {
  const result = { dispatcher: [] as Round[], core: [] as Round[] };
  for (let round = 0; round < rounds; round++) {
    const viaDispatcher = (): Promise<void> =>
      dispatcherTurns(concurrency, turnsPerClient).then((done) => void result.dispatcher.push(done));
    const viaCore = (): Promise<void> =>
      coreTurns(concurrency, turnsPerClient).then((done) => void result.core.push(done));
    if (round % 2 === 0) {
      await viaDispatcher();
      await viaCore();
    } else {
      await viaCore();
      await viaDispatcher();
    }
  }
  return result;
}

type Round = { latencies: number[]; wallMs: number };

/**
 * A store of `count` sessions, as a long-used server has: each a directory
 * with its meta.json, all in one registry write (creating them one by one
 * would rewrite the registry `count` times and only slow the setup). The
 * first is made through the store itself, with a node, to be crashed later.
 */
async function seed(count: number): Promise<{ first: string }> {
  const { id: first } = await store.db.createSession({ source: "bench" });
  await store.db.appendNode(first, { role: "user", output: "hello" });
  const now = Date.now() / 1000;
  const entries: SessionRecord[] = [];
  for (let index = 1; index < count; index++) {
    const id = `session_${index.toString(16).padStart(10, "0")}`;
    const created = now - count + index;
    const meta = {
      id,
      agent_id: "main",
      title: "",
      source: "bench",
      created_at: created,
      updated_at: created,
      head_id: null,
    };
    mkdirSync(join(store.root, id, "history"), { recursive: true, mode: 0o700 });
    writeFileSync(join(store.root, id, "meta.json"), JSON.stringify(meta), { mode: 0o600 });
    entries.push({
      ...meta,
      status: "idle",
      pinned: false,
      archived: false,
      unread: false,
      preview: `bench session ${index}`,
      channel: null,
      peer_display: null,
      peer_id: null,
    });
  }
  // The registry, written as the store writes it (nothing else writes this store while it is seeded).
  const index = join(store.root, "index.json");
  // A store whose sessions were all made here has no registry yet (it is written when a turn ends).
  const all = (existsSync(index) ? JSON.parse(readFileSync(index, "utf8")) : {}) as Record<string, SessionRecord>;
  for (const entry of entries) all[entry.id] = entry;
  writeFileSync(`${index}.seed`, JSON.stringify(all, null, 2), { mode: 0o600 });
  renameSync(`${index}.seed`, index);
  return { first };
}

/** Leaves a session as a process killed mid-turn does: a running node, its lease naming a dead pid, status running. */
async function crash(sessionId: string): Promise<void> {
  const dead = spawn(process.execPath, ["-e", "0"]);
  await new Promise((resolve) => dead.on("close", resolve));
  await store.db.appendNode(sessionId, { role: "code", name: "work", metadata: { status: "running" } });
  const turns = join(store.root, sessionId, ".state", "turns");
  mkdirSync(turns, { recursive: true, mode: 0o700 });
  writeFileSync(join(turns, "turn_crashed.lease"), `${dead.pid} ${hostname()} ${Date.now()}\n`, { mode: 0o600 });
  await store.db.setStatus(sessionId, "running");
}

/** This process's CPU time so far (ms), and the registry file's identity (each write renames a new file into place). */
function cpu(): { cpuMs: number; registry: string } {
  const usage = process.cpuUsage();
  const stats = statSync(join(store.root, "index.json"), { throwIfNoEntry: false });
  return { cpuMs: (usage.user + usage.system) / 1000, registry: `${stats?.ino}:${stats?.mtimeMs}` };
}

/** A CPU profile of this process between profile-start and profile-stop (bench/profile-server.ts), written to `path`. */
const profiler = new InspectorSession();
function inspect(method: string): Promise<unknown> {
  return new Promise((resolve, reject) =>
    profiler.post(method, (error, result) => (error ? reject(error) : resolve(result))),
  );
}
async function startProfile(): Promise<void> {
  profiler.connect();
  await inspect("Profiler.enable");
  await inspect("Profiler.start");
}
async function stopProfile(path: string): Promise<void> {
  const { profile } = (await inspect("Profiler.stop")) as { profile: unknown };
  writeFileSync(path, JSON.stringify(profile));
  profiler.disconnect();
}

const server = await start();
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on("message", (message: ChildRequest) => {
  const answer = (value: unknown): void => {
    process.send?.(value);
  };
  switch (message.cmd) {
    case "rss":
      answer({ rss: process.memoryUsage().rss });
      return;
    case "seed":
      void seed(message.sessions).then(answer);
      return;
    case "crash":
      void crash(message.sessionId).then(() => answer({ ok: true }));
      return;
    case "recover":
      // What the next turn on the session would do first.
      void store.db.recover(message.sessionId).then((recovered) => answer({ recovered }));
      return;
    case "cpu":
      answer(cpu());
      return;
    case "profile-start":
      void startProfile().then(() => answer({ ok: true }));
      return;
    case "profile-stop":
      void stopProfile(message.path).then(() => answer({ ok: true }));
      return;
    case "core":
      void coreTurns(message.concurrency, message.turnsPerClient).then(answer);
      return;
    case "interleaved":
      void interleaved(message.turns).then(answer);
      return;
    case "paired":
      void paired(message.concurrency, message.turnsPerClient, message.rounds).then(answer);
      return;
    case "verify-floor":
      answer({ problems: floorStore ? floorStore.verify(message.sample) : ["not a floor server"] });
      return;
    case "exit":
      void server.close().then(() => {
        store.cleanup();
        process.exit(0);
      });
      return;
  }
});
