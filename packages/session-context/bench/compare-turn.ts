// The continued chat turn of this checkout's core beside another checkout's (main in a worktree, say), both loaded
// in this one process and run in short alternating rounds, so that the shared machine's drifting load weighs on
// both alike (the dispatcher's bench/compare.ts runs two servers a round apart, and its CPU per turn moved by 20%
// between rounds on a busy machine). A round: CLIENTS callers at once, each in a session of its own made for the
// round, run TURNS chat turns (sessionContext with that session's id, the scripted provider), in a fresh store;
// then the same on the other side. Prints the median wall time and process CPU (every thread: the thread pool's
// fsyncs and renames too) per turn, and the ratio this / other.
// Usage: tsx bench/compare-turn.ts <other checkout's root> [rounds (default 15)] [clients (default 1)] [turns (default 40)]
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { comparisonLine } from "@openprogram/bench-kit";
import { loadCheckouts, type Round, type Side } from "./two-checkouts.js";

const [otherRoot, roundsArgument = "15", clientsArgument = "1", turnsArgument = "40"] = process.argv.slice(2);
if (!otherRoot) throw new Error("usage: tsx bench/compare-turn.ts <other checkout's root> [rounds] [clients] [turns]");
const ROUNDS = Number(roundsArgument);
const CLIENTS = Number(clientsArgument);
const TURNS = Number(turnsArgument);

const sides = await loadCheckouts(otherRoot);

async function turnsRound(side: Side): Promise<Round> {
  const { core, testing } = sides[side];
  const root = mkdtempSync(join(tmpdir(), `openprogram-bench-turn-${side}-`));
  try {
    const db = new core.SessionDB({ root });
    const { runtime } = testing.scriptedRuntime(
      Array.from({ length: CLIENTS * TURNS }, (_, index) => `reply ${index}`),
    );
    // The sessions are made before the clock starts: the round is continued turns only.
    const sessionIds = await Promise.all(Array.from({ length: CLIENTS }, async () => (await db.createSession({})).id));
    await db.flushRegistry();
    const cpu = process.cpuUsage();
    const began = performance.now();
    await Promise.all(
      sessionIds.map(async (sessionId) => {
        for (let turn = 0; turn < TURNS; turn++)
          await core.sessionContext({ db, runtime, sessionId, source: "bench", fromEnvironment: false }, async () =>
            core.chat(`message ${turn}`),
          );
      }),
    );
    const wall = performance.now() - began;
    const used = process.cpuUsage(cpu);
    await db.flushRegistry();
    return {
      wallMsPerTurn: wall / (CLIENTS * TURNS),
      cpuMsPerTurn: (used.user + used.system) / 1000 / (CLIENTS * TURNS),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const load1 = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(" ");
process.stdout.write(`compare-turn: ${ROUNDS} alternating rounds of ${CLIENTS} x ${TURNS}; load ${load1()}\n`);
const results = { this: [] as Round[], other: [] as Round[] };
for (const side of ["this", "other"] as const) await turnsRound(side); // warm-up: module loading, JIT
for (let index = 0; index < ROUNDS; index++) {
  const order: Side[] = index % 2 === 0 ? ["this", "other"] : ["other", "this"];
  for (const side of order) results[side].push(await turnsRound(side));
}
process.stdout.write(`load at end ${load1()}\n`);
const label = `continued chat turn (${CLIENTS} callers x ${TURNS}, in-process)`;
for (const [metric, pick] of [
  ["wall ms/turn", (r: Round) => r.wallMsPerTurn],
  ["CPU ms/turn", (r: Round) => r.cpuMsPerTurn],
] as const) {
  process.stdout.write(`${comparisonLine(`${label} ${metric}`, results.this.map(pick), results.other.map(pick), 2)}\n`);
}
