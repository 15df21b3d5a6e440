#!/usr/bin/env node
// `pnpm bench:peers`: the same durable agent workload through this project,
// LangGraph.js, Mastra and the bare OpenAI SDK, in one run (issue 38). Each
// workload prints a Markdown table and saves its raw figures as JSON under
// results/. Options (all optional):
//   --workload turn,tool-turn,concurrent,resume,fsync,memory,flatness,profile (default: turn,resume,fsync)
//              (tool-turn: each step a call asking for a tool, the tool, the call reading it)
//   --latency 0,200     the fake server's reply latency in ms (turn, tool-turn, concurrent, profile)
//   --peers a,b         variant ids or prefixes (openprogram, bare-sdk, langgraph, langgraph-sqlite, mastra, ...)
//   --rounds N          alternating rounds (turn: 10, concurrent: 2, resume: 3)
//   --turns N           turns per variant per round (turn: 5), timed turns (fsync: 200, profile: 100), session length (flatness: 1000)
//   --sessions N        concurrent sessions (concurrent: 50)
//   --stored N          sessions stored, one turn each (memory: 1000)
//   --warm N            turns before the profiled ones, in the same session (profile: 5; 1000 shows a long session)
//   --keep-profiles DIR the profile workload also saves each variant's .cpuprofile in DIR (for DevTools)
//   --quick             small sizes, for checking the bench itself
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, release, totalmem } from "node:os";
import { parseArgs } from "node:util";
import { emptyTrash, settleAfterDeletes, startFakeServer } from "./lib/environment.mjs";
import { selectVariants } from "./lib/variants.mjs";
import { renderTable } from "./lib/render.mjs";
import { runConcurrentWorkload, runTurnWorkload } from "./workloads/turn.mjs";
import { runResumeWorkload } from "./workloads/resume.mjs";
import { runFsyncWorkload } from "./workloads/fsync.mjs";
import { runMemoryWorkload } from "./workloads/memory.mjs";
import { runFlatnessWorkload } from "./workloads/flatness.mjs";
import { runProfileWorkload } from "./workloads/profile.mjs";

const { values } = parseArgs({
  options: {
    workload: { type: "string", default: "turn,resume,fsync" },
    latency: { type: "string", default: "0,200" },
    peers: { type: "string" },
    rounds: { type: "string" },
    turns: { type: "string" },
    sessions: { type: "string" },
    stored: { type: "string" },
    warm: { type: "string" },
    "keep-profiles": { type: "string" },
    quick: { type: "boolean", default: false },
  },
});
const quick = values.quick;
const number = (text, fallback) => (text === undefined ? fallback : Number(text));
const WORKLOADS = ["turn", "tool-turn", "concurrent", "resume", "fsync", "memory", "flatness", "profile"];
const workloads = values.workload.split(",").map((name) => name.trim());
const unknown = workloads.filter((name) => !WORKLOADS.includes(name));
if (unknown.length > 0) {
  process.stderr.write(`peer-bench: unknown workload ${unknown.join(", ")}; choose from ${WORKLOADS.join(", ")}\n`);
  process.exit(2);
}
const latencies = values.latency.split(",").map(Number);
const variants = selectVariants(values.peers?.split(","));
const log = (line) => process.stderr.write(`[peer-bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const machine = `${cpus().length} x ${cpus()[0]?.model ?? "CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}`;
const stamp = new Date().toISOString().replace(/[:.]/g, "-").slice(0, 19);
mkdirSync(new URL("results/", import.meta.url), { recursive: true });

async function withServer(latency, kind, body) {
  const server = await startFakeServer(latency, kind);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

await settleAfterDeletes(log);
for (const workload of workloads) {
  const started = new Date();
  const loadBefore = loadavg()[0];
  const perLatency = ["turn", "tool-turn", "concurrent", "profile"].includes(workload) ? latencies : [0];
  for (const latency of perLatency) {
    log(`${workload} at ${latency} ms: ${variants.map((variant) => variant.id).join(", ")}`);
    const rows = await withServer(latency, workload === "tool-turn" ? "tools" : "text", (server) => {
      const baseUrl = server.baseUrl;
      switch (workload) {
        case "turn":
          return runTurnWorkload({
            variants,
            baseUrl,
            rounds: number(values.rounds, quick ? 2 : 10),
            turns: number(values.turns, quick ? 2 : 5),
            warm: 3,
            log,
          });
        case "tool-turn":
          return runTurnWorkload({
            variants,
            baseUrl,
            rounds: number(values.rounds, quick ? 2 : 10),
            turns: number(values.turns, quick ? 2 : 5),
            warm: 3,
            log,
            method: "runToolTurn",
          });
        case "concurrent":
          return runConcurrentWorkload({
            variants,
            baseUrl,
            rounds: number(values.rounds, quick ? 1 : 2),
            sessions: number(values.sessions, quick ? 5 : 50),
            turns: quick ? 4 : 20,
            log,
          });
        case "resume":
          return runResumeWorkload({ variants, server, repeats: number(values.rounds, quick ? 1 : 3), log });
        case "fsync":
          // 200: a long session's periodic costs must be in the count (our log's checkpoint, every ~20 turns of this
          // workload, fsyncs each file the log names; 20 turns in a new session missed it).
          return runFsyncWorkload({ variants, server, warm: 3, turns: number(values.turns, quick ? 5 : 200), log });
        case "memory":
          return runMemoryWorkload({ variants, server, sessions: number(values.stored, quick ? 50 : 1000), log });
        case "flatness":
          return runFlatnessWorkload({
            variants,
            baseUrl,
            turns: number(values.turns, quick ? 40 : 1000),
            chunk: quick ? 10 : 50,
            log,
          });
        case "profile":
          return runProfileWorkload({
            variants,
            server,
            warm: number(values.warm, 5),
            turns: number(values.turns, quick ? 20 : 100),
            keep: values["keep-profiles"],
            log,
          });
        default:
          throw new Error(`unknown workload ${workload}`);
      }
    });
    const record = {
      workload,
      latency,
      machine,
      started: started.toISOString(),
      finished: new Date().toISOString(),
      loadBefore,
      loadAfter: loadavg()[0],
      rows,
    };
    const file = new URL(`results/${stamp}-${workload}-${latency}ms.json`, import.meta.url);
    writeFileSync(file, `${JSON.stringify(record, null, 1)}\n`);
    process.stdout.write(`\n${renderTable(record)}\n`);
  }
}
emptyTrash();
