#!/usr/bin/env node
// A probe, not a workload: where our turn waits under concurrent sessions. Runs this project's agent turn (the
// `openprogram` variant of the peers' workloads, the same fake server) in SESSIONS sessions at once, TURNS turns
// each, with each SessionDB method timed from call to settle, and prints per turn how long the turns awaited each
// method (summed over the turn's calls), the rate, the median turn and how busy the event loop was. A method
// awaited much longer than it takes alone (a node write is about 0.5 ms) is waiting for the event loop or
// libuv's pool, not working.
// The process's CPU per turn (user and system, every thread) is printed too: at 200 ms the turns are bound by it.
// STORE_WAITS_FS=open,rename,... times each named node:fs function from call to return, on the event loop's
// thread: how long the loop is held by a call, including the hand-off of an asynchronous one to libuv's pool.
//   node store-waits.mjs [latency ms (200)] [sessions (50)] [turns (8)]
import fs, { mkdtempSync, rmSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startFakeServer } from "./lib/environment.mjs";
import { core } from "./lib/workspace.mjs";
import { oursVariants } from "./peers/ours.mjs";

const [latency = 200, sessions = 50, turns = 8] = process.argv.slice(2).map(Number);
const TIMED = ["appendNode", "updateNode", "beginTurn", "endTurn", "openSession", "createSession", "recover"];

// Replaced before the core is loaded; syncBuiltinESMExports makes its named imports of node:fs see the wrappers.
const held = new Map();
for (const name of (process.env.STORE_WAITS_FS ?? "").split(",").filter(Boolean)) {
  const original = fs[name];
  if (typeof original !== "function") throw new Error(`STORE_WAITS_FS: node:fs has no function ${name}`);
  fs[name] = function timed(...args) {
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const calls = held.get(name) ?? [];
      calls.push(performance.now() - started);
      held.set(name, calls);
    }
  };
}
syncBuiltinESMExports();

const { SessionDB } = await core();
const waits = new Map();
for (const method of TIMED) {
  const original = SessionDB.prototype[method];
  SessionDB.prototype[method] = async function timed(...args) {
    const started = performance.now();
    try {
      return await original.apply(this, args);
    } finally {
      const entry = waits.get(method) ?? { ms: 0, calls: 0 };
      entry.ms += performance.now() - started;
      entry.calls += 1;
      waits.set(method, entry);
    }
  };
}

const server = await startFakeServer(latency);
const dir = mkdtempSync(join(process.env.PEER_BENCH_TMP ?? tmpdir(), "peer-bench-store-waits-"));
try {
  const ours = await oursVariants()[0].open({ baseUrl: server.baseUrl, dir });
  await ours.runTurn("warm", 0);
  waits.clear();
  held.clear();
  const loopBefore = performance.eventLoopUtilization();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const walls = [];
  await Promise.all(
    Array.from({ length: sessions }, async (_, session) => {
      for (let turn = 0; turn < turns; turn += 1) {
        const turnStarted = performance.now();
        await ours.runTurn(`s${session}`, turn);
        walls.push(performance.now() - turnStarted);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const loop = performance.eventLoopUtilization(loopBefore);
  const cpu = process.cpuUsage(cpuBefore);
  const count = sessions * turns;
  walls.sort((a, b) => a - b);
  process.stdout.write(
    `${sessions} sessions x ${turns} turns at ${latency} ms: ${((count / elapsed) * 1000).toFixed(1)} turns/s, ` +
      `median turn ${walls[count >> 1].toFixed(0)} ms, event loop ${(loop.utilization * 100).toFixed(0)}% busy, ` +
      `CPU per turn ${(cpu.user / 1000 / count).toFixed(1)} ms user + ${(cpu.system / 1000 / count).toFixed(1)} ms system (all threads)\n`,
  );
  for (const [name, calls] of held) {
    calls.sort((a, b) => a - b);
    const us = (share) => (calls[Math.min(calls.length - 1, Math.floor(calls.length * share))] * 1000).toFixed(0);
    const total = calls.reduce((sum, ms) => sum + ms, 0);
    process.stdout.write(
      `fs.${name.padEnd(11)} held the loop ${(total / count).toFixed(2)} ms per turn, ${(calls.length / count).toFixed(1)} calls, ` +
        `median ${us(0.5)} us, p90 ${us(0.9)} us, p99 ${us(0.99)} us\n`,
    );
  }
  for (const [method, { ms, calls }] of [...waits].sort((a, b) => b[1].ms - a[1].ms))
    process.stdout.write(
      `${method.padEnd(14)} ${(ms / count).toFixed(1)} ms awaited per turn, ${(calls / count).toFixed(1)} calls, ${(ms / calls).toFixed(2)} ms each\n`,
    );
} finally {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
