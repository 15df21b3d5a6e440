// Store benchmarks (issue 2): each figure beside a raw baseline from the same run.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report, sample } from "@openprogram/bench-kit";
import { SessionDB } from "../src/entries/store.js";
import { dumpsPython } from "../src/json/python-json.js";
import { rawDurableWrite, rawDurableWriteAsync } from "./raw-writes.js";

const PACKAGE = "@openprogram/session-context";

function node(seq: number): Record<string, unknown> {
  return {
    id: seq.toString(16).padStart(12, "0"),
    created_at: 1796000402.5594914,
    seq,
    role: "code",
    name: "design_experiments",
    input: { idea: "survey agent reliability" },
    output: "1. exp A\n2. exp B\n3. exp C",
    caller: "9abc9d1465e5",
    predecessor: null,
    reads: [],
    metadata: { expose: "io", status: "completed", doc: "Design three experiments that test the idea." },
  };
}

/** The same node the raw baseline writes, as a draft. */
const DRAFT = {
  role: "code" as const,
  name: "design_experiments",
  input: { idea: "survey agent reliability" },
  output: "1. exp A\n2. exp B\n3. exp C",
  caller: "9abc9d1465e5",
  metadata: { expose: "io", status: "completed", doc: "Design three experiments that test the idea." },
};

export async function benchStore(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-store-"));
  try {
    const db = new SessionDB({ root: join(home, "sessions") });
    await db.createSession({ id: "bench" });

    // Durable append: ours (lock, seq, atomic write, journal) vs the same raw steps (temp file, fsync, rename,
    // directory fsync) done with fs.promises, as the store does them; a synchronous raw write is printed for reference.
    const rawDir = join(home, "raw");
    mkdirSync(rawDir);
    let rawSeq = 0;
    const count = iterations(400);
    const rawAsync: number[] = [];
    const rawSync: number[] = [];
    const ours: number[] = [];
    // Interleave the three so machine noise hits them alike.
    for (let round = 0; round < count; round++) {
      const text = dumpsPython(node(rawSeq));
      let started = performance.now();
      await rawDurableWriteAsync(rawDir, `${String(rawSeq).padStart(4, "0")}-c-${rawSeq}.json`, text);
      rawAsync.push(performance.now() - started);
      rawSeq++;
      started = performance.now();
      rawDurableWrite(rawDir, `${String(rawSeq).padStart(4, "0")}-c-${rawSeq}.json`, text);
      rawSync.push(performance.now() - started);
      rawSeq++;
      started = performance.now();
      await db.appendNode("bench", DRAFT);
      ours.push(performance.now() - started);
    }
    const rawMedian = median(rawAsync);
    const appendMedian = median(ours);
    report({
      package: PACKAGE,
      metric: "durable node append",
      unit: "ms",
      median: appendMedian,
      baseline: rawMedian,
      baselineLabel: "raw temp+fsync+rename+dir fsync (fs.promises)",
      target: "<= 1.3x baseline",
      met: appendMedian <= 1.3 * rawMedian,
      samples: count,
    });
    report({
      package: PACKAGE,
      metric: "raw durable write, synchronous (reference)",
      unit: "ms",
      median: median(rawSync),
      baseline: rawMedian,
      baselineLabel: "the same with fs.promises",
      samples: count,
    });

    // Turn commit: commitTurn vs raw `git add -A && git commit` of the same change.
    const rawRepo = join(home, "raw-repo");
    mkdirSync(join(rawRepo, "history"), { recursive: true });
    const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
    const rawGit = (...args: string[]): void =>
      void execFileSync("git", args, { cwd: rawRepo, env: gitEnv, stdio: "ignore" });
    rawGit("init", "-q", "-b", "main");
    rawGit("config", "user.name", "OpenProgram");
    rawGit("config", "user.email", "openprogram@local");
    rawGit("commit", "-q", "--allow-empty", "-m", "session init");
    await db.commitTurn("bench", "warm-up");
    const commitRounds = iterations(60);
    const rawCommits: number[] = [];
    const ourCommits: number[] = [];
    for (let round = 0; round < commitRounds; round++) {
      rawDurableWrite(join(rawRepo, "history"), `${round}.json`, dumpsPython(node(round)));
      let started = performance.now();
      rawGit("add", "-A");
      rawGit("commit", "-q", "-m", `turn ${round}`);
      rawCommits.push(performance.now() - started);
      await db.appendNode("bench", { role: "user", output: `turn ${round}` });
      started = performance.now();
      await db.commitTurn("bench", `turn ${round}`);
      ourCommits.push(performance.now() - started);
    }
    const commitMedian = median(ourCommits);
    const rawCommitMedian = median(rawCommits);
    report({
      package: PACKAGE,
      metric: "turn commit",
      unit: "ms",
      median: commitMedian,
      baseline: rawCommitMedian,
      baselineLabel: "raw git add -A + git commit",
      target: "<= 1.3x baseline",
      met: commitMedian <= 1.3 * rawCommitMedian,
      samples: commitRounds,
    });

    // Create session.
    let created = 0;
    const creates = await sample(() => db.createSession({ id: `created_${created++}` }), {
      iterations: iterations(200),
      warmup: 5,
    });
    const createMedian = median(creates);
    report({
      package: PACKAGE,
      metric: "create session",
      unit: "ms",
      median: createMedian,
      baseline: rawMedian,
      baselineLabel: "one raw durable write",
      target: "<= 5 ms",
      met: createMedian <= 5,
      samples: creates.length,
    });

    // Loading a 10,000-node session, cold (a new store instance each time, as a new process would). The fixture's
    // files are written directly, in the store's format: only the load is measured, and 10,000 durable appends
    // would take most of the benchmark's time budget.
    await db.createSession({ id: "big" });
    for (let index = 0; index < 10_000; index++) {
      const id = index.toString(16).padStart(12, "0");
      const role = index % 2 ? "llm" : "code";
      const record = {
        id,
        created_at: 1796000402.5 + index / 1000,
        seq: index,
        role,
        name: "n",
        input: { index },
        output: "x".repeat(200),
        caller: index % 2 ? "parent" : "",
        predecessor: null,
        reads: [],
        metadata: { status: "completed" },
      };
      writeFileSync(
        join(db.root, "big", "history", `${String(index).padStart(4, "0")}-${role[0]}-${id}.json`),
        dumpsPython(record),
      );
    }
    const loads = await sample(() => new SessionDB({ root: db.root }).loadNodes("big"), {
      iterations: iterations(10),
      warmup: 1,
    });
    const loadMedian = median(loads);
    const rawLoads = await sample(() => rawReadAll(join(db.root, "big", "history")), {
      iterations: iterations(10),
      warmup: 1,
    });
    report({
      package: PACKAGE,
      metric: "load a 10,000-node session (cold)",
      unit: "ms",
      median: loadMedian,
      baseline: median(rawLoads),
      baselineLabel: "raw readdir + read + JSON.parse",
      target: "<= 300 ms",
      met: loadMedian <= 300,
      samples: loads.length,
    });

    // Listing 1,000 sessions, cold (the registry parsed by a new store instance).
    const listHome = join(home, "list");
    const listDb = new SessionDB({ root: join(listHome, "sessions") });
    for (let index = 0; index < 1000; index++)
      await listDb.createSession({ id: `s_${index}`, title: `Session ${index}` });
    const lists = await sample(() => new SessionDB({ root: listDb.root }).listSessions(), {
      iterations: iterations(30),
      warmup: 2,
    });
    const listMedian = median(lists);
    const rawParse = await sample(() => rawParseIndex(join(listDb.root, "index.json")), {
      iterations: iterations(30),
      warmup: 2,
    });
    report({
      package: PACKAGE,
      metric: "list 1,000 sessions (cold)",
      unit: "ms",
      median: listMedian,
      baseline: median(rawParse),
      baselineLabel: "raw read + JSON.parse of index.json",
      target: "<= 20 ms",
      met: listMedian <= 20,
      samples: lists.length,
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

async function rawReadAll(directory: string): Promise<number> {
  const { readdirSync, readFileSync } = await import("node:fs");
  let total = 0;
  for (const name of readdirSync(directory))
    total += (JSON.parse(readFileSync(join(directory, name), "utf8")) as { seq: number }).seq;
  return total;
}

async function rawParseIndex(path: string): Promise<number> {
  const { readFileSync } = await import("node:fs");
  const entries = Object.values(JSON.parse(readFileSync(path, "utf8")) as Record<string, { updated_at: number }>);
  entries.sort((a, b) => b.updated_at - a.updated_at);
  return entries.length;
}
