// Durable turns (issue 14): replaying 1,000 recorded calls of a stopped turn,
// beside loading the same session from disk in the same run.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import { agenticFunction, CancelledError, sessionContext } from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { resumeTurn } from "../src/entries/turns.js";
import { scriptedRuntime } from "../src/testing/index.js";

const PACKAGE = "@openprogram/session-context";
const CALLS = 1000;
const SESSION_ID = "replay_bench";

/** One recorded call: an agentic function with a model call under it. */
const step = agenticFunction({ name: "step", doc: "Do one step." }, async ({ index }: { index: number }, { runtime }) =>
  runtime.exec(`Step ${index}`),
);

/** Set while the first run records the turn: it then stops after its calls, as a kill would. */
let stopAfterCalls = true;
/** When the resumed program finished its replayed calls, and when it started them. */
let replayStarted = 0;
let replayEnded = 0;

const manySteps = agenticFunction({ name: "many_steps", doc: "Do the steps." }, async () => {
  replayStarted = performance.now();
  for (let index = 0; index < CALLS; index++) await step({ index });
  replayEnded = performance.now();
  if (stopAfterCalls) throw new CancelledError("stopped after its calls, for the benchmark");
  return CALLS;
});

/**
 * Records a turn of 1,000 calls (2,001 nodes) that stopped after them, then,
 * on fresh copies of the store, times loading the session with a new
 * SessionDB (the baseline) and resuming the turn with another: the program
 * runs again and each of its 1,000 calls gives its recorded result (the
 * runtime has no replies: a live call would fail). The figure is the
 * program's replay of the calls; the whole resume (load, claim, replay, the
 * continuation's node and commit) is printed beside the same baseline.
 */
export async function benchReplay(): Promise<void> {
  // In memory where there is a tmpfs: a round copies the session (2,001 node files, ~6,000 git objects), which on a
  // slow shared disk takes seconds. The figures are page-cached reads and CPU either way; fsyncs cost nothing there.
  const home = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "openprogram-bench-replay-"));
  try {
    const root = join(home, "recorded");
    const { runtime } = scriptedRuntime(Array.from({ length: CALLS }, (_, index) => `done ${index}`));
    stopAfterCalls = true;
    await sessionContext({ db: new SessionDB({ root }), runtime, sessionId: SESSION_ID }, () => manySteps({})).catch(
      (error: unknown) => {
        if (!(error instanceof CancelledError)) throw error;
      },
    );
    stopAfterCalls = false;

    const rounds = iterations(10);
    const loads: number[] = [];
    const replays: number[] = [];
    const resumes: number[] = [];
    for (let round = -2; round < rounds; round++) {
      const copy = join(home, `round-${round}`);
      cpSync(root, copy, { recursive: true });
      // A copy has new inodes: let git re-read them now, not in the resume's commit.
      execFileSync("git", ["-C", join(copy, SESSION_ID), "update-index", "-q", "--refresh"], { stdio: "ignore" });
      let started = performance.now();
      const nodes = await new SessionDB({ root: copy }).loadNodes(SESSION_ID);
      const load = performance.now() - started;
      if (nodes.length !== 2 * CALLS + 1) throw new Error(`the recorded turn has ${nodes.length} nodes`);

      const idle = scriptedRuntime([]);
      started = performance.now();
      const result = await resumeTurn({
        sessionId: SESSION_ID,
        db: new SessionDB({ root: copy }),
        runtime: idle.runtime,
        program: manySteps,
      });
      const resume = performance.now() - started;
      if (result !== CALLS || idle.provider.requests.length !== 0)
        throw new Error("the resume did not replay every call");
      rmSync(copy, { recursive: true, force: true });
      // The first two rounds warm up.
      if (round >= 0) {
        loads.push(load);
        replays.push(replayEnded - replayStarted);
        resumes.push(resume);
      }
    }
    const baseline = median(loads);
    const replay = median(replays);
    report({
      package: PACKAGE,
      metric: `replay ${CALLS.toLocaleString("en")} recorded calls of a stopped turn (each an agentic call with a model call; none runs)`,
      unit: "ms",
      median: replay,
      baseline,
      baselineLabel: `load the session, ${2 * CALLS + 1} nodes, new SessionDB`,
      target: "<= 50 ms and <= 1.2x baseline",
      met: replay <= 50 && replay <= 1.2 * baseline,
      samples: rounds,
    });
    report({
      package: PACKAGE,
      metric: `the whole resume around it: load, claim, replay ${CALLS.toLocaleString("en")} calls, record and commit the continuation (tmpfs: no fsync cost)`,
      unit: "ms",
      median: median(resumes),
      baseline,
      baselineLabel: `load the session, ${2 * CALLS + 1} nodes, new SessionDB`,
      samples: rounds,
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
