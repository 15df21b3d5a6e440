// Compares this checkout's dispatcher with another checkout's (main in a worktree, say) on the bench's rounds,
// alternating between the two so that the shared machine's drifting load weighs on both alike: rounds of 50
// clients x 20 chat turns in continued sessions, and rounds of one new session per turn (1,000 sessions, each in a
// fresh server), with each server's CPU per turn. Prints medians and the ratio this / other.
// Usage: tsx bench/compare.ts <other checkout's root> [rounds (default 3)] [continued|new (default both)]
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { iterations, median } from "@openprogram/bench-kit";
import { WebSocket } from "ws";
import { startBenchChild, type BenchChild } from "./bench-child.js";
import type { ChildRequest } from "./server-child.js";

const [otherRoot, roundsArgument = "3", only] = process.argv.slice(2);
if (!otherRoot) throw new Error("usage: tsx bench/compare.ts <other checkout's root> [rounds]");
const ROUNDS = Number(roundsArgument);
const CLIENTS = 50;
const TURNS = iterations(20);
const SERVERS = {
  this: fileURLToPath(new URL("./server-child.ts", import.meta.url)),
  other: join(resolve(otherRoot), "packages/dispatcher/bench/server-child.ts"),
};
type Side = keyof typeof SERVERS;

/** One client's chat turns, each ended by turn_done; `fresh`: a new session every turn. */
async function client(port: number, turns: number, fresh: boolean, latencies: number[]): Promise<void> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/ws`, { perMessageDeflate: false });
  await new Promise((done, fail) => socket.once("open", done).once("error", fail));
  let sessionId: string | undefined;
  for (let turn = 0; turn < turns; turn++) {
    const started = performance.now();
    await new Promise<void>((done, fail) => {
      const onMessage = (data: Buffer): void => {
        const frame = JSON.parse(data.toString("utf8")) as { type: string; session_id?: string };
        if (frame.type === "session") sessionId = frame.session_id;
        if (frame.type === "turn_done") {
          socket.off("message", onMessage);
          done();
        } else if (frame.type === "turn_failed" || frame.type === "error") fail(new Error(JSON.stringify(frame)));
      };
      socket.on("message", onMessage);
      const session = !fresh && sessionId ? { session_id: sessionId } : {};
      socket.send(JSON.stringify({ type: "chat", text: `message ${turn}`, ...session }));
    });
    latencies.push(performance.now() - started);
  }
  socket.close();
}

interface Round {
  turnsPerSecond: number;
  cpuMsPerTurn: number;
  p99: number;
}

async function round(server: BenchChild<ChildRequest>, fresh: boolean): Promise<Round> {
  const latencies: number[] = [];
  const before = (await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
  const began = performance.now();
  await Promise.all(Array.from({ length: CLIENTS }, () => client(server.port, TURNS, fresh, latencies)));
  const wall = performance.now() - began;
  const cpu = (await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs - before;
  latencies.sort((a, b) => a - b);
  return {
    turnsPerSecond: latencies.length / (wall / 1000),
    cpuMsPerTurn: cpu / latencies.length,
    p99: latencies[Math.ceil(latencies.length * 0.99) - 1] as number,
  };
}

const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
process.stdout.write(`compare: this checkout against ${otherRoot}, ${ROUNDS} alternating rounds; load ${load()}\n`);
const results: Record<"continued" | "new", Record<Side, Round[]>> = {
  continued: { this: [], other: [] },
  new: { this: [], other: [] },
};
const replies = String(ROUNDS * CLIENTS * TURNS + 200);
const servers = {
  this: await startBenchChild<ChildRequest>(SERVERS.this, ["dispatcher", replies]),
  other: await startBenchChild<ChildRequest>(SERVERS.other, ["dispatcher", replies]),
};
for (const side of ["this", "other"] as const) {
  const warm: number[] = [];
  await client(servers[side].port, 10, false, warm);
}
for (let index = 0; index < (only === "new" ? 0 : ROUNDS); index++) {
  // Which goes first alternates too.
  const order: Side[] = index % 2 === 0 ? ["this", "other"] : ["other", "this"];
  for (const side of order) results.continued[side].push(await round(servers[side], false));
}
for (const side of ["this", "other"] as const) await servers[side].stop();
for (let index = 0; index < (only === "continued" ? 0 : ROUNDS); index++) {
  const order: Side[] = index % 2 === 0 ? ["other", "this"] : ["this", "other"];
  for (const side of order) {
    const fresh = await startBenchChild<ChildRequest>(SERVERS[side], ["dispatcher", String(CLIENTS * TURNS + 100)]);
    results.new[side].push(await round(fresh, true));
    await fresh.stop();
  }
}
process.stdout.write(`load at end ${load()}\n`);
for (const kind of ["continued", "new"] as const) {
  if (results[kind].this.length === 0) continue;
  for (const [metric, pick] of [
    ["turns/s", (r: Round) => r.turnsPerSecond],
    ["server CPU ms/turn", (r: Round) => r.cpuMsPerTurn],
    ["p99 ms", (r: Round) => r.p99],
  ] as const) {
    const ours = median(results[kind].this.map(pick));
    const theirs = median(results[kind].other.map(pick));
    const each = (side: Side): string => results[kind][side].map((r) => pick(r).toFixed(1)).join(", ");
    process.stdout.write(
      `${kind} ${metric}: this ${ours.toFixed(2)} | other ${theirs.toFixed(2)} | ratio ${(ours / theirs).toFixed(2)}x  (this: ${each("this")}; other: ${each("other")})\n`,
    );
  }
}
