// Tracing benchmark (issue 18): one agentic call with exec, traced into an in-memory exporter, beside the same call
// untraced (no tracer provider: the API's no-op), interleaved in batches in the same run.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { iterations, median, report } from "@openprogram/bench-kit";
import { agenticFunction, sessionContext } from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { scriptedRuntime } from "../src/testing/index.js";

export async function benchTracing(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-tracing-"));
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  try {
    const db = new SessionDB({ root: join(home, "sessions") });
    const calls = iterations(300);
    const scripted = scriptedRuntime(Array.from({ length: 2 * calls + 50 }, (_, index) => `reply ${index}`));
    const design = agenticFunction(
      { name: "design_experiments", doc: "Design three experiments that test the idea." },
      async ({ idea }: { idea: string }, { runtime }) => runtime.exec(`Idea: ${idea}`),
    );
    const traced: number[] = [];
    const untraced: number[] = [];
    // Alternating call by call (the machine is shared: load moves both alike), one turn per 50 calls.
    for (let turn = 0; turn * 50 < 2 * calls; turn++) {
      await sessionContext({ db, sessionId: `calls_${turn}`, runtime: scripted.runtime }, async () => {
        for (let index = 0; index < 50; index++) {
          const tracing = index % 2 === 1;
          if (tracing) trace.setGlobalTracerProvider(provider);
          const started = performance.now();
          await design({ idea: "agent reliability" });
          (tracing ? traced : untraced).push(performance.now() - started);
          if (tracing) trace.disable();
        }
      });
      exporter.reset();
    }
    const tracedMedian = median(traced);
    const untracedMedian = median(untraced);
    report({
      package: "@openprogram/session-context",
      metric: "one top-level agentic call with exec, traced (in-memory exporter)",
      unit: "ms",
      median: tracedMedian,
      baseline: untracedMedian,
      baselineLabel: "the same call untraced (no tracer provider)",
      target: "<= 1.1x baseline",
      met: tracedMedian <= untracedMedian * 1.1,
      samples: traced.length,
    });
  } finally {
    await provider.shutdown();
    rmSync(home, { recursive: true, force: true });
  }
}
