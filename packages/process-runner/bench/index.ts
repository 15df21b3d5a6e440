// Benchmarks of issue 6: child start to its first node on disk (target <= 150 ms) beside a bare
// child_process.fork of an empty script, and stop-to-gone after SIGKILL (target <= 50 ms) beside
// SIGKILL of a bare forked child. Medians; every baseline is measured in the same run.
import { fork } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { iterations, median, percentile, report } from "@openprogram/bench-kit";
import { sessionContext, type SessionEvent } from "@openprogram/session-context";
import { createTempStore } from "@openprogram/session-context/testing";
import { runInChild } from "../src/index.js";

const PACKAGE = "@openprogram/process-runner";
const program = (name: string): string => fileURLToPath(new URL(`./programs/${name}`, import.meta.url));

/** Milliseconds from fork() to the exit of a script. */
function forkToExit(script: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = fork(script, [], { stdio: "ignore", execArgv: [] });
    child.once("error", reject);
    child.once("exit", () => resolve(performance.now() - started));
  });
}

/** Milliseconds from SIGKILL to the exit event of an idle forked child. */
function killBareChild(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = fork(program("idle-child.mjs"), [], { stdio: ["ignore", "ignore", "ignore", "ipc"], execArgv: [] });
    child.once("error", reject);
    child.once("message", () => {
      const started = performance.now();
      child.once("exit", () => resolve(performance.now() - started));
      child.kill("SIGKILL");
    });
  });
}

/** Live (non-zombie) processes in the group, from /proc. */
function liveGroupMembers(pgid: number): number {
  let live = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid && fields[0] !== "Z") live++;
    } catch {
      // the process ended while we looked
    }
  }
  return live;
}

async function sampleSerially(count: number, once: () => Promise<number>): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < Math.min(3, count); index++) await once();
  for (let index = 0; index < count; index++) times.push(await once());
  return times;
}

const store = createTempStore("openprogram-runner-bench-");
const env = { OPENPROGRAM_HOME: store.home, OPENPROGRAM_PROVIDER: "none" };
try {
  const sessionId = await sessionContext(
    { db: store.db, runtime: null, source: "bench" },
    (session) => session.sessionId,
  );

  /** One turn that runs `module` in a child; resolves with the time to its first node event and the run. */
  const firstNode = async (module: string): Promise<number> => {
    let firstAt = 0;
    const onEvent = (event: SessionEvent): void => {
      if (firstAt === 0 && event.type === "node") firstAt = performance.now();
    };
    return sessionContext({ db: store.db, sessionId, runtime: null, onEvent, source: "bench" }, async () => {
      const started = performance.now();
      await runInChild({ module, env });
      return firstAt - started;
    });
  };

  const startRuns = iterations(30);
  const bareFork = median(await sampleSerially(startRuns, () => forkToExit(program("empty.mjs"))));
  const coreImport = median(await sampleSerially(startRuns, () => forkToExit(program("import-core.mjs"))));
  const firstNodeTimes = await sampleSerially(startRuns, () => firstNode(program("first-node.mjs")));
  const firstNodeMedian = median(firstNodeTimes);
  report({
    package: PACKAGE,
    metric: "child start to its first node on disk (runInChild, .mjs program)",
    unit: "ms",
    median: firstNodeMedian,
    baseline: bareFork,
    baselineLabel: "bare fork of an empty script, fork to exit",
    target: "<= 150 ms",
    met: firstNodeMedian <= 150,
    samples: startRuns,
  });
  process.stdout.write(`  p90 ${percentile(firstNodeTimes, 90).toFixed(1)} ms\n`);
  report({
    package: PACKAGE,
    metric: "of which: a fresh Node process importing @openprogram/session-context, fork to exit",
    unit: "ms",
    median: coreImport,
    baseline: bareFork,
    baselineLabel: "bare fork of an empty script",
    samples: startRuns,
  });

  const typeScriptRuns = iterations(10);
  const typeScriptFirstNode = median(await sampleSerially(typeScriptRuns, () => firstNode(program("first-node.ts"))));
  report({
    package: PACKAGE,
    metric: "child start to its first node on disk, TypeScript program (tsx loader in the child)",
    unit: "ms",
    median: typeScriptFirstNode,
    baseline: firstNodeMedian,
    baselineLabel: "the same with a .mjs program",
    samples: typeScriptRuns,
  });

  const stopRuns = iterations(20);
  const bareKill = median(await sampleSerially(stopRuns, killBareChild));
  const stopResolved: number[] = [];
  const goneTimes = await sampleSerially(stopRuns, async () => {
    let running: () => void = () => undefined;
    const appended = new Promise<void>((resolve) => (running = resolve));
    const onEvent = (event: SessionEvent): void => {
      if (event.type === "node") running();
    };
    return sessionContext({ db: store.db, sessionId, runtime: null, onEvent, source: "bench" }, async () => {
      const run = runInChild({ module: program("stubborn.mjs"), env, graceMs: 0 });
      await appended;
      // Let the grandchild start, so that the kill has a whole group to take down.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      await run.stop("bench");
      stopResolved.push(performance.now() - started);
      // Gone: no process of the group left alive (zombies awaiting init's reaping are dead).
      while (liveGroupMembers(run.pid as number) > 0) await new Promise((resolve) => setImmediate(resolve));
      const gone = performance.now() - started;
      await run.result.catch(() => undefined);
      return gone;
    });
  });
  const goneMedian = median(goneTimes);
  report({
    package: PACKAGE,
    metric: "stop-to-gone after SIGKILL (stop() with graceMs 0 until no live process of the group is left in /proc)",
    unit: "ms",
    median: goneMedian,
    baseline: bareKill,
    baselineLabel: "SIGKILL of a bare forked child to its exit event",
    target: "<= 50 ms",
    met: goneMedian <= 50,
    samples: stopRuns,
  });
  report({
    package: PACKAGE,
    metric: "of which: stop() resolving (child reaped, group sent SIGKILL, nodes recorded killed)",
    unit: "ms",
    median: median(stopResolved.slice(-stopRuns)),
    baseline: bareKill,
    baselineLabel: "SIGKILL of a bare forked child to its exit event",
    samples: stopRuns,
  });
} finally {
  store.cleanup();
}
