// Benchmark of issue 13 item 4: reads must not run crash recovery. A server
// with 1,000 sessions answers 2,000 `list_sessions` frames (what the page
// sends) while one session is left `running` by a killed process, beside the
// same reads with no crashed session, in alternating rounds of the same run.
// The figure is the server process's CPU time (user + system); the registry
// rewrites during the reads are counted too (there must be none).
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { iterations, median, report } from "@openprogram/bench-kit";
import { WebSocket } from "ws";
import { startBenchChild, type BenchChild } from "./bench-child.js";
import type { ChildRequest } from "./server-child.js";

const SESSIONS = 1000;
const READS = iterations(2000);
// Two rounds of each (alternating which goes first) keep this under two minutes on the shared reference machine.
const ROUNDS = 2;
/** Frames in flight at once: enough to keep the server busy, few enough to not measure queueing. */
const IN_FLIGHT = 16;
const CHILD = fileURLToPath(new URL("./server-child.ts", import.meta.url));

function startServer(): Promise<BenchChild<ChildRequest>> {
  return startBenchChild<ChildRequest>(CHILD, ["dispatcher", "10"]);
}

/** Sends `count` list_sessions frames, `IN_FLIGHT` at a time, and waits for every answer. */
async function readSessions(socket: WebSocket, count: number): Promise<void> {
  let sent = 0;
  let answered = 0;
  await new Promise<void>((resolve, reject) => {
    const onMessage = (data: Buffer): void => {
      if (!data.subarray(0, 20).toString().includes('"sessions"')) {
        reject(new Error(`unexpected frame: ${data.subarray(0, 200).toString()}`));
        return;
      }
      answered++;
      if (sent < count) {
        socket.send('{"type":"list_sessions"}');
        sent++;
      }
      if (answered === count) {
        socket.off("message", onMessage);
        resolve();
      }
    };
    socket.on("message", onMessage);
    for (; sent < Math.min(IN_FLIGHT, count); sent++) socket.send('{"type":"list_sessions"}');
  });
}

async function main(): Promise<void> {
  process.stdout.write(
    `crashed-session bench: ${READS} list_sessions over ${SESSIONS} sessions, ${ROUNDS} rounds each, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")}\n`,
  );
  const server = await startServer();
  const { first: crashable } = await server.ask<{ first: string }>({ cmd: "seed", sessions: SESSIONS });
  const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws`, { perMessageDeflate: false });
  const hello = new Promise((resolve) => socket.once("message", resolve));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  await hello;
  await readSessions(socket, Math.min(200, READS)); // warm-up

  const measure = async (): Promise<{ cpuMs: number; rewrites: number }> => {
    const before = await server.ask<{ cpuMs: number; registry: string }>({ cmd: "cpu" });
    await readSessions(socket, READS);
    const after = await server.ask<{ cpuMs: number; registry: string }>({ cmd: "cpu" });
    return { cpuMs: after.cpuMs - before.cpuMs, rewrites: before.registry === after.registry ? 0 : 1 };
  };
  const clean: number[] = [];
  const crashed: number[] = [];
  let rewrites = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, so neither always meets a warmer (or busier) machine.
    const cleanRound = async (): Promise<void> => void clean.push((await measure()).cpuMs);
    const crashedRound = async (): Promise<void> => {
      await server.ask({ cmd: "crash", sessionId: crashable });
      const result = await measure();
      crashed.push(result.cpuMs);
      rewrites += result.rewrites;
      // What the session's next turn does first; the reads above must not have done it.
      const { recovered } = await server.ask<{ recovered: boolean }>({ cmd: "recover", sessionId: crashable });
      if (!recovered) throw new Error("the crashed session was recovered by reads (or never crashed)");
    };
    if (round % 2 === 0) {
      await cleanRound();
      await crashedRound();
    } else {
      await crashedRound();
      await cleanRound();
    }
  }
  socket.close();
  await server.stop();
  process.stdout.write(`registry rewrites during the reads with a crashed session: ${rewrites}\n`);

  const crashedMedian = median(crashed);
  const cleanMedian = median(clean);
  report({
    package: "dispatcher",
    metric: `server CPU for ${READS} list_sessions, one crashed session among ${SESSIONS}`,
    unit: "ms",
    median: crashedMedian,
    baseline: cleanMedian,
    baselineLabel: "no crashed session, alternating rounds",
    target: "<= 1.3x baseline, no registry rewrite",
    met: crashedMedian <= 1.3 * cleanMedian && rewrites === 0,
    samples: crashed.length,
  });
}

await main();
