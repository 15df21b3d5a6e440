import { percentile } from "@openprogram/bench-kit";
import type { BenchChild } from "./bench-child.js";
import { runChatClient } from "./chat-client.js";
import type { ChildRequest } from "./server-child.js";

/** One round's figures: the rate over the round's wall time, the server's CPU per turn and the turns' p99. */
export interface ChatRound {
  turnsPerSecond: number;
  cpuMsPerTurn: number;
  p99: number;
}

/** `clients` clients at once, each running `turns` chat turns against `server` (`fresh`: a new session each turn). */
export async function chatRound(
  server: BenchChild<ChildRequest>,
  clients: number,
  turns: number,
  fresh: boolean,
): Promise<ChatRound> {
  const latencies: number[] = [];
  const before = (await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: clients }, () => runChatClient(server.port, turns, { newSessions: fresh, latencies })),
  );
  const wall = performance.now() - began;
  const cpu = (await server.ask<{ cpuMs: number }>({ cmd: "cpu" })).cpuMs - before;
  return {
    turnsPerSecond: latencies.length / (wall / 1000),
    cpuMsPerTurn: cpu / latencies.length,
    p99: percentile(latencies, 99),
  };
}
