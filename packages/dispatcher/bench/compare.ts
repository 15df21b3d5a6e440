// Compares this checkout's dispatcher with another checkout's (main in a worktree, say) on the bench's rounds,
// alternating between the two so that the shared machine's drifting load weighs on both alike: rounds of 50
// clients x 20 chat turns in continued sessions, and rounds of one new session per turn (1,000 sessions, each in a
// fresh server), with each server's CPU per turn. Prints medians and the ratio this / other.
// Usage: tsx bench/compare.ts <other checkout's root> [rounds (default 3)] [continued|new|both (default both)]
//        [clients (default 50)] [turns per client (default 20)]
// Fewer clients (one, say) give a steadier CPU per turn on a shared machine: no turn waits on another's lock.
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { comparisonLine, iterations } from "@openprogram/bench-kit";
import { startBenchChild } from "./bench-child.js";
import { runChatClient } from "./chat-client.js";
import { chatRound, type ChatRound } from "./chat-round.js";
import type { ChildRequest } from "./server-child.js";

const [otherRoot, roundsArgument = "3", only, clientsArgument = "50", turnsArgument] = process.argv.slice(2);
if (!otherRoot) throw new Error("usage: tsx bench/compare.ts <other checkout's root> [rounds]");
const ROUNDS = Number(roundsArgument);
const CLIENTS = Number(clientsArgument);
const TURNS = turnsArgument ? Number(turnsArgument) : iterations(20);
const SERVERS = {
  this: fileURLToPath(new URL("./server-child.ts", import.meta.url)),
  other: join(resolve(otherRoot), "packages/dispatcher/bench/server-child.ts"),
};
type Side = keyof typeof SERVERS;

const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
process.stdout.write(`compare: this checkout against ${otherRoot}, ${ROUNDS} alternating rounds; load ${load()}\n`);
const results: Record<"continued" | "new", Record<Side, ChatRound[]>> = {
  continued: { this: [], other: [] },
  new: { this: [], other: [] },
};
const replies = String(ROUNDS * CLIENTS * TURNS + 200);
const servers = {
  this: await startBenchChild<ChildRequest>(SERVERS.this, ["dispatcher", replies]),
  other: await startBenchChild<ChildRequest>(SERVERS.other, ["dispatcher", replies]),
};
for (const side of ["this", "other"] as const) await runChatClient(servers[side].port, 10, { newSessions: false });
for (let index = 0; index < (only === "new" ? 0 : ROUNDS); index++) {
  // Which goes first alternates too.
  const order: Side[] = index % 2 === 0 ? ["this", "other"] : ["other", "this"];
  for (const side of order) results.continued[side].push(await chatRound(servers[side], CLIENTS, TURNS, false));
}
for (const side of ["this", "other"] as const) await servers[side].stop();
for (let index = 0; index < (only === "continued" ? 0 : ROUNDS); index++) {
  const order: Side[] = index % 2 === 0 ? ["other", "this"] : ["this", "other"];
  for (const side of order) {
    const fresh = await startBenchChild<ChildRequest>(SERVERS[side], ["dispatcher", String(CLIENTS * TURNS + 100)]);
    results.new[side].push(await chatRound(fresh, CLIENTS, TURNS, true));
    await fresh.stop();
  }
}
process.stdout.write(`load at end ${load()}\n`);
for (const kind of ["continued", "new"] as const) {
  if (results[kind].this.length === 0) continue;
  for (const [metric, pick] of [
    ["turns/s", (r: ChatRound) => r.turnsPerSecond],
    ["server CPU ms/turn", (r: ChatRound) => r.cpuMsPerTurn],
    ["p99 ms", (r: ChatRound) => r.p99],
  ] as const) {
    const line = comparisonLine(`${kind} ${metric}`, results[kind].this.map(pick), results[kind].other.map(pick), 1);
    process.stdout.write(`${line}\n`);
  }
}
