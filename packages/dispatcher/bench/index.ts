// Benchmark of issue 5: 50 concurrent clients each running 20 chat turns
// through the dispatcher (scripted provider, no artificial latency), beside a
// bare `ws` echo round trip measured in the same run; the server's RSS after
// 1,000 sessions; and, to show where the time goes, the same chat turns run
// by the core alone in the server process (no dispatcher in front).
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { iterations, median, percentile, report } from "@openprogram/bench-kit";
import { WebSocket } from "ws";
import { startBenchChild, type BenchChild } from "./bench-child.js";
import type { ChildRequest } from "./server-child.js";

const CLIENTS = 50;
const TURNS = iterations(20);
// Two rounds keep the whole `pnpm bench` report under three minutes on the reference machine.
const ROUNDS = 2;
const SESSIONS_FOR_RSS = iterations(1000);
const MiB = 1024 * 1024;
const CHILD = fileURLToPath(new URL("./server-child.ts", import.meta.url));

type ServerChild = BenchChild<ChildRequest>;

function startServer(mode: "echo" | "dispatcher", replies: number): Promise<ServerChild> {
  return startBenchChild<ChildRequest>(CHILD, [mode, String(replies)]);
}

/** One connection that sends a frame and waits for the frame that ends the exchange. */
class LoadClient {
  private waiting: ((text: string) => void) | null = null;

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const text = (data as Buffer).toString("utf8");
      this.waiting?.(text);
    });
  }

  static async open(url: string): Promise<LoadClient> {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    return new LoadClient(socket);
  }

  /** Sends `frame` and resolves with the first message `done` accepts. */
  exchange(frame: string, done: (text: string) => boolean): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = (text) => {
        if (!done(text)) return;
        this.waiting = null;
        resolve(text);
      };
      this.socket.send(frame);
    });
  }

  close(): void {
    this.socket.close();
  }
}

interface Round {
  latencies: number[];
  wallMs: number;
}

/** `clients` connections each doing `turns` sequential exchanges at once. */
async function load(
  url: string,
  clients: number,
  turns: number,
  exchange: (client: LoadClient, turn: number, state: { sessionId?: string }) => Promise<void>,
): Promise<Round> {
  const connections = await Promise.all(Array.from({ length: clients }, () => LoadClient.open(url)));
  const latencies: number[] = [];
  const began = performance.now();
  await Promise.all(
    connections.map(async (client) => {
      const state: { sessionId?: string } = {};
      for (let turn = 0; turn < turns; turn++) {
        const started = performance.now();
        await exchange(client, turn, state);
        latencies.push(performance.now() - started);
      }
    }),
  );
  const wallMs = performance.now() - began;
  for (const client of connections) client.close();
  return { latencies, wallMs };
}

const echoExchange = async (client: LoadClient, turn: number): Promise<void> => {
  await client.exchange(
    JSON.stringify({ type: "chat", session_id: "session_0123456789", text: `message ${turn}` }),
    () => true,
  );
};

/** One chat turn: a new session on the first turn, then the same session. */
const chatExchange = async (client: LoadClient, turn: number, state: { sessionId?: string }): Promise<void> => {
  const frame = JSON.stringify({
    type: "chat",
    text: `message ${turn}`,
    ...(state.sessionId ? { session_id: state.sessionId } : {}),
  });
  const last = await client.exchange(frame, (text) => {
    const parsed = JSON.parse(text) as { type: string; session_id?: string };
    if (parsed.type === "session") state.sessionId = parsed.session_id;
    return parsed.type === "turn_done" || parsed.type === "turn_failed" || parsed.type === "error";
  });
  const parsed = JSON.parse(last) as { type: string; error?: { code: string; message: string }; message?: string };
  if (parsed.type !== "turn_done") throw new Error(`A benchmark turn failed: ${last}`);
};

/** A chat in a new session every time (for the RSS after many sessions). */
const newSessionExchange = async (client: LoadClient, turn: number): Promise<void> => chatExchange(client, turn, {});

function pooled(rounds: Round[]): number[] {
  return rounds.flatMap((round) => round.latencies);
}

function throughput(round: Round): number {
  return round.latencies.length / (round.wallMs / 1000);
}

async function main(): Promise<void> {
  process.stdout.write(
    `dispatcher bench: ${CLIENTS} clients x ${TURNS} chat turns, ${ROUNDS} round(s); RSS after ${SESSIONS_FOR_RSS} sessions\n`,
  );
  // The machine is shared: the load average says how much of it this run had.
  process.stdout.write(
    `load average at start: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")}\n`,
  );

  const echo = await startServer("echo", 0);
  const echoUrl = `ws://127.0.0.1:${echo.port}`;
  await load(echoUrl, 1, 50, echoExchange);
  const echoRounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) echoRounds.push(await load(echoUrl, CLIENTS, TURNS, echoExchange));
  const echoSingle = await load(echoUrl, 1, TURNS * 2, echoExchange);
  await echo.stop();

  const replies = 20 + 2 * ROUNDS * CLIENTS * TURNS + TURNS * 4 + 100;
  const server = await startServer("dispatcher", replies);
  const url = `ws://127.0.0.1:${server.port}/ws`;
  await load(url, 1, 10, chatExchange);
  const rounds: Round[] = [];
  const cpuBefore = (await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
  for (let round = 0; round < ROUNDS; round++) rounds.push(await load(url, CLIENTS, TURNS, chatExchange));
  // The server's own CPU (user + system) per turn of the rounds: no child process runs per turn (issue 19).
  const cpuPerTurn = ((await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs - cpuBefore) / pooled(rounds).length;
  const single = await load(url, 1, TURNS * 2, chatExchange);
  // Where the time goes: the dispatcher against the core alone, measured in
  // the server process with alternating rounds so both meet the same load.
  const paired = await server.ask<{ dispatcher: number[]; core: number[] }>({ cmd: "interleaved", turns: TURNS * 2 });
  // One alternating round is enough to say where the time goes (the aims are judged on the rounds above).
  const concurrent = await server.ask<{ dispatcher: Round[]; core: Round[] }>({
    cmd: "paired",
    concurrency: CLIENTS,
    turnsPerClient: TURNS,
    rounds: 1,
  });

  await server.stop();

  // RSS after 1,000 sessions, in a fresh server that does only that (the rounds above, and the in-process
  // "core alone" rounds, would otherwise count toward its high-water mark).
  const fresh = await startServer("dispatcher", SESSIONS_FOR_RSS + 100);
  const freshUrl = `ws://127.0.0.1:${fresh.port}/ws`;
  const rssAtStart = (await fresh.ask<{ rss: number }>({ cmd: "rss" })).rss;
  const perClient = Math.max(1, Math.ceil(SESSIONS_FOR_RSS / CLIENTS));
  const freshCpuBefore = (await fresh.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
  const growing = await load(freshUrl, CLIENTS, perClient, newSessionExchange);
  const newSessionCpuPerTurn =
    ((await fresh.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs - freshCpuBefore) / growing.latencies.length;
  const sessionsUsed = perClient * CLIENTS;
  const rssAfter = (await fresh.ask<{ rss: number }>({ cmd: "rss" })).rss;
  await fresh.stop();
  process.stdout.write(
    `load average at end: ${loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")}\n`,
  );

  const all = pooled(rounds);
  const echoAll = pooled(echoRounds);
  const turnsPerSecond = median(rounds.map(throughput));
  const echoPerSecond = median(echoRounds.map(throughput));
  const p50 = percentile(all, 50);
  const p99 = percentile(all, 99);
  const echoP50 = percentile(echoAll, 50);
  const echoP99 = percentile(echoAll, 99);
  const base = { package: "dispatcher", samples: all.length } as const;

  report({
    ...base,
    metric: `chat turns per second (${CLIENTS} clients x ${TURNS} turns)`,
    unit: "turns/s",
    median: turnsPerSecond,
    baseline: echoPerSecond,
    baselineLabel: "ws echo round trips/s",
    target: ">= 400 turns/s",
    met: turnsPerSecond >= 400,
  });
  report({
    ...base,
    metric: "turn latency p50 (send chat -> turn_done)",
    unit: "ms",
    median: p50,
    baseline: echoP50,
    baselineLabel: "ws echo p50",
  });
  report({
    ...base,
    metric: "turn latency p99",
    unit: "ms",
    median: p99,
    baseline: echoP99,
    baselineLabel: "ws echo p99",
  });
  report({
    ...base,
    metric: "added latency per turn p50 (turn - echo)",
    unit: "ms",
    median: p50 - echoP50,
    baseline: echoP50,
    baselineLabel: "ws echo p50",
  });
  report({
    ...base,
    metric: "added latency per turn p99 (turn - echo)",
    unit: "ms",
    median: p99 - echoP99,
    baseline: echoP99,
    baselineLabel: "ws echo p99",
    target: "<= 150 ms",
    met: p99 - echoP99 <= 150,
  });
  report({
    ...base,
    samples: single.latencies.length,
    metric: "one client alone: turn latency p50",
    unit: "ms",
    median: median(single.latencies),
    baseline: median(echoSingle.latencies),
    baselineLabel: "ws echo p50, one client",
  });
  // Where the time goes: the same turns run by the core alone, in the server process.
  report({
    ...base,
    samples: pooled(concurrent.dispatcher).length,
    metric: `${CLIENTS} concurrent clients in the server process: turns per second through the dispatcher`,
    unit: "turns/s",
    median: median(concurrent.dispatcher.map(throughput)),
    baseline: median(concurrent.core.map(throughput)),
    baselineLabel: "core alone, same process, alternating rounds",
  });
  report({
    ...base,
    samples: paired.dispatcher.length,
    metric: "one turn through the dispatcher p50 (interleaved with the core alone)",
    unit: "ms",
    median: median(paired.dispatcher),
    baseline: median(paired.core),
    baselineLabel: "core alone, same process",
  });
  report({
    ...base,
    samples: growing.latencies.length,
    metric: `chat turns per second, one new session per turn, up to ${sessionsUsed} sessions`,
    unit: "turns/s",
    median: throughput(growing),
    baseline: turnsPerSecond,
    baselineLabel: `${CLIENTS} clients x ${TURNS} turns`,
    target: ">= 300 turns/s",
    met: throughput(growing) >= 300,
  });
  report({
    ...base,
    samples: pooled(rounds).length,
    metric: "server CPU per chat turn (user + system)",
    unit: "ms",
    median: cpuPerTurn,
    baseline: (1000 * ROUNDS) / rounds.reduce((sum, round) => sum + throughput(round), 0),
    baselineLabel: "wall time per turn at that throughput",
  });
  report({
    ...base,
    samples: growing.latencies.length,
    metric: "server CPU per chat turn, one new session per turn",
    unit: "ms",
    median: newSessionCpuPerTurn,
    baseline: cpuPerTurn,
    baselineLabel: "the same in continued sessions",
  });
  report({
    ...base,
    samples: 1,
    metric: `server RSS after ${sessionsUsed} sessions`,
    unit: "MiB",
    median: rssAfter / MiB,
    baseline: rssAtStart / MiB,
    baselineLabel: "RSS at start",
    target: "< 200 MiB",
    met: rssAfter / MiB < 200,
  });
}

await main();
