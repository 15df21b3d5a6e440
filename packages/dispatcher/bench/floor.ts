// The dispatcher beside the floor of a chat turn on this disk (floor-turn.ts: only what Python OpenProgram reads
// and one git commit per turn, with the store's durability and none of its checks or protocol files), in
// alternating rounds of 50 clients x 20 chat turns, continued sessions and one new session per turn (each round in
// fresh servers). What the dispatcher's rate is short of the floor's is what the store's own work costs: its
// locks, lease, journal, checks, usage.json, the reply's running node and the protocol's frames.
// Usage: tsx bench/floor.ts [rounds (default 3)] [continued|new (default both)]
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { comparisonLine, iterations, median, report } from "@openprogram/bench-kit";
import { startBenchChild } from "./bench-child.js";
import { runChatClient } from "./chat-client.js";
import { chatRound, type ChatRound } from "./chat-round.js";
import type { ChildRequest } from "./server-child.js";

const [roundsArgument = "3", only] = process.argv.slice(2);
const ROUNDS = Number(roundsArgument);
const CLIENTS = 50;
const TURNS = iterations(20);
const CHILD = fileURLToPath(new URL("./server-child.ts", import.meta.url));
type Mode = "dispatcher" | "floor";

const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");

async function roundIn(mode: Mode, fresh: boolean): Promise<ChatRound> {
  const server = await startBenchChild<ChildRequest>(CHILD, [mode, String(CLIENTS * TURNS + 100)]);
  try {
    // A warm-up outside the round: the server's first turns compile its code.
    if (!fresh) await runChatClient(server.port, 5, { newSessions: false });
    const round = await chatRound(server, CLIENTS, TURNS, fresh);
    if (mode === "floor") {
      const { problems } = await server.ask<{ problems: string[] }>({ cmd: "verify-floor", sample: 5 });
      if (problems.length > 0) throw new Error(`the floor wrote a broken session:\n${problems.join("\n")}`);
    }
    return round;
  } finally {
    await server.stop();
  }
}

process.stdout.write(
  `floor: the dispatcher beside a chat turn's floor, ${ROUNDS} alternating rounds; load ${load()}\n`,
);
const kinds = (["continued", "new"] as const).filter((kind) => !only || kind === only);
for (const kind of kinds) {
  const rounds: Record<Mode, ChatRound[]> = { dispatcher: [], floor: [] };
  for (let index = 0; index < ROUNDS; index++) {
    // Which goes first alternates, so neither always meets the busier machine.
    const order: Mode[] = index % 2 === 0 ? ["dispatcher", "floor"] : ["floor", "dispatcher"];
    for (const mode of order) {
      rounds[mode].push(await roundIn(mode, kind === "new"));
      process.stderr.write(`${kind} ${mode}: ${JSON.stringify(rounds[mode].at(-1))}\n`);
    }
  }
  const label = kind === "new" ? "one new session per turn" : "50 clients x 20 turns";
  for (const [metric, pick] of [
    ["turns/s", (round: ChatRound) => round.turnsPerSecond],
    ["server CPU ms/turn", (round: ChatRound) => round.cpuMsPerTurn],
    ["p99 ms", (round: ChatRound) => round.p99],
  ] as const) {
    process.stdout.write(
      `${comparisonLine(`${kind} ${metric} (this: dispatcher, other: floor)`, rounds.dispatcher.map(pick), rounds.floor.map(pick), 1)}\n`,
    );
  }
  report({
    package: "dispatcher",
    metric: `chat turns per second (${label}) beside the floor of the same turns on this disk`,
    unit: "turns/s",
    median: median(rounds.dispatcher.map((round) => round.turnsPerSecond)),
    baseline: median(rounds.floor.map((round) => round.turnsPerSecond)),
    baselineLabel: "the floor (bench/floor-turn.ts)",
  });
  report({
    package: "dispatcher",
    metric: `server CPU per chat turn (${label}) beside the floor's`,
    unit: "ms",
    median: median(rounds.dispatcher.map((round) => round.cpuMsPerTurn)),
    baseline: median(rounds.floor.map((round) => round.cpuMsPerTurn)),
    baselineLabel: "the floor's server CPU per turn",
  });
}
process.stdout.write(`load at end ${load()}\n`);
