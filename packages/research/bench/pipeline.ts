// A whole research run against the scripted demo model, beside the same calls
// made through the core alone: the figure is the harness's own cost (validation,
// parsing, rendering, durable artifact files) on top of the core's.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { iterations, median, report } from "@openprogram/bench-kit";
import { agenticFunction, sessionContext, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { createTempStore, scriptedRuntime } from "@openprogram/session-context/testing";
import { runResearch } from "../src/index.js";

const PACKAGE = "@openprogram/research";
const DEMO_REPLIES = fileURLToPath(new URL("../demo/replies.json", import.meta.url));
const MODEL_CALLS = 11;

const bareStage = agenticFunction(
  { name: "bare_stage", doc: "A stage." },
  async ({ data }: { data: string }, { runtime }) => runtime.exec(data),
);
const bareChoice = agenticFunction({ name: "bare_choice", doc: "A choice." }, async ({ ideas }: { ideas: string }) =>
  ideas.slice(0, 10),
);
const bareAgent = agenticFunction(
  { name: "bare_agent", doc: "The stages.", expose: "output" },
  async ({ task }: { task: string }) => {
    const outputs: string[] = [];
    for (let index = 0; index < MODEL_CALLS; index++) {
      outputs.push(await bareStage({ data: `Task: ${task}\n\n${outputs.at(-1) ?? ""}` }));
      if (index === 1) outputs.push(await bareChoice({ ideas: outputs[1] as string }));
    }
    return outputs.length;
  },
);

/** Times full runs and the bare baseline, interleaved. */
export async function benchPipeline(): Promise<void> {
  const store = createTempStore("openprogram-bench-research-");
  const work = mkdtempSync(join(tmpdir(), "openprogram-bench-research-work-"));
  try {
    const rounds = iterations(20);
    const runs: number[] = [];
    const bare: number[] = [];
    for (let round = -2; round < rounds; round++) {
      const demo = createRuntime({ provider: "scripted", script: DEMO_REPLIES }) as Runtime;
      let started = performance.now();
      const run = await runResearch("benchmark task", {
        db: store.db,
        runtime: demo,
        workDir: join(work, `run-${round}`),
      });
      const runTime = performance.now() - started;
      if (run.status !== "completed") throw new Error(`the benchmark run did not complete: ${run.summary}`);

      const { runtime } = scriptedRuntime(Array.from({ length: MODEL_CALLS }, () => "x".repeat(1500)));
      started = performance.now();
      await sessionContext({ db: store.db, runtime, idPrefix: "bare" }, () => bareAgent({ task: "benchmark task" }));
      const bareTime = performance.now() - started;
      // The first two rounds warm up.
      if (round >= 0) {
        runs.push(runTime);
        bare.push(bareTime);
      }
    }
    report({
      package: PACKAGE,
      metric: `full research run, scripted model (${MODEL_CALLS} model calls, 6 sections, revised; 12 artifacts)`,
      unit: "ms",
      median: median(runs),
      baseline: median(bare),
      baselineLabel: "the same calls through the core alone",
      target: "none (issue 7 sets no speed target)",
      samples: rounds,
    });
  } finally {
    store.cleanup();
    rmSync(work, { recursive: true, force: true });
  }
}
