// The new-session turn of this checkout's core beside another checkout's (main in a worktree, say), both loaded in
// this one process and run in alternating rounds, so that the shared machine's drifting load weighs on both alike.
// A round: CLIENTS concurrent callers each run TURNS chat turns, every one in a new session (sessionContext
// without an id, the scripted provider), as the dispatcher runs them; then the same on the other side. Prints
// the median wall time and process CPU (all threads) per turn, and the ratio this / other. Also the create alone
// (createSession without a repository, the same callers at once) under the same alternation.
// Usage: tsx bench/compare-new-session.ts <other checkout's root> [rounds (default 5)]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { comparisonLine, iterations } from "@openprogram/bench-kit";
import { loadCheckouts, type Round, type Side } from "./two-checkouts.js";

const [otherRoot, roundsArgument = "5"] = process.argv.slice(2);
if (!otherRoot) throw new Error("usage: tsx bench/compare-new-session.ts <other checkout's root> [rounds]");
const ROUNDS = Number(roundsArgument);
const CLIENTS = 10;
const TURNS = iterations(20);

const sides = await loadCheckouts(otherRoot);

async function turnsRound(side: Side): Promise<Round> {
  const { core, testing } = sides[side];
  const root = mkdtempSync(join(tmpdir(), `openprogram-bench-new-${side}-`));
  try {
    const db = new core.SessionDB({ root });
    const { runtime } = testing.scriptedRuntime(
      Array.from({ length: CLIENTS * TURNS }, (_, index) => `reply ${index}`),
    );
    const cpu = process.cpuUsage();
    const began = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let turn = 0; turn < TURNS; turn++)
          await core.sessionContext({ db, runtime, source: "bench", fromEnvironment: false }, async () =>
            core.chat(`message ${turn}`),
          );
      }),
    );
    const wall = performance.now() - began;
    const used = process.cpuUsage(cpu);
    return {
      wallMsPerTurn: wall / (CLIENTS * TURNS),
      cpuMsPerTurn: (used.user + used.system) / 1000 / (CLIENTS * TURNS),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function createRound(side: Side): Promise<Round> {
  const { core } = sides[side];
  const root = mkdtempSync(join(tmpdir(), `openprogram-bench-create-${side}-`));
  try {
    const db = new core.SessionDB({ root });
    const cpu = process.cpuUsage();
    const began = performance.now();
    // The same callers creating at once (no repository: both sides alike), where creates can share the root's flush.
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let index = 0; index < TURNS; index++) await db.createSession({});
      }),
    );
    const wall = performance.now() - began;
    const used = process.cpuUsage(cpu);
    const count = CLIENTS * TURNS;
    return { wallMsPerTurn: wall / count, cpuMsPerTurn: (used.user + used.system) / 1000 / count };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const results = {
  turns: { this: [] as Round[], other: [] as Round[] },
  create: { this: [] as Round[], other: [] as Round[] },
};
for (const side of ["this", "other"] as const) await turnsRound(side); // warm-up: module loading, JIT
for (let index = 0; index < ROUNDS; index++) {
  const order: Side[] = index % 2 === 0 ? ["this", "other"] : ["other", "this"];
  for (const side of order) results.turns[side].push(await turnsRound(side));
  for (const side of order) results.create[side].push(await createRound(side));
}
for (const [kind, label] of [
  ["turns", `new-session chat turn (${CLIENTS} callers x ${TURNS}, in-process)`],
  ["create", `createSession (${CLIENTS} callers x ${TURNS}, at once)`],
] as const) {
  for (const [metric, pick] of [
    ["wall ms/turn", (r: Round) => r.wallMsPerTurn],
    ["CPU ms/turn", (r: Round) => r.cpuMsPerTurn],
  ] as const) {
    const line = comparisonLine(`${label} ${metric}`, results[kind].this.map(pick), results[kind].other.map(pick), 2);
    process.stdout.write(`${line}\n`);
  }
}
