// A whole turn through the store's public API (issue 19): beginTurn, 4 appendNode, endTurn with its commit,
// beside the raw durable writes such a turn needs, raw `git add -A && git commit` of the same change, and Python
// OpenProgram's store doing the same turn in the same run; the same turn among 10,000 sessions beside a store of
// one; and CPU time per turn (this process plus the child processes it waited for).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import { SessionDB } from "../src/entries/store.js";
import { dumpsPython, dumpsPythonIndented } from "../src/json/python-json.js";
import { rawDurableWriteAsync } from "./raw-writes.js";

const PACKAGE = "@openprogram/session-context";
/**
 * The writes a 4-node turn needs to be durable: the 4 node files, meta.json (head and updated_at), and the
 * commit's ref. Everything else a turn writes (registry, leases, locks) is bookkeeping a crash may lose.
 */
const DURABLE_WRITES_PER_TURN = 6;
const NODE_TEXT = "survey agent reliability: 1. exp A 2. exp B 3. exp C";

/** CPU milliseconds of this process and of the children it has waited for (git), from /proc. */
function cpuMs(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // Fields after the command name: cutime and cstime are the 14th and 15th, in clock ticks (100 per second).
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]?.split(" ") ?? [];
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    // not Linux: children's CPU is not counted
  }
  return (own.user + own.system) / 1000 + children;
}

/** Runs `turns` 4-node chat turns in `sessionId`; returns each turn's milliseconds and the CPU ms of all of them. */
async function runTurns(db: SessionDB, sessionId: string, turns: number): Promise<{ times: number[]; cpu: number }> {
  const times: number[] = [];
  const cpuStarted = cpuMs();
  for (let turn = 0; turn < turns; turn++) {
    const turnId = `turn_${turn.toString(16).padStart(10, "0")}`;
    const started = performance.now();
    await db.beginTurn(sessionId, turnId);
    for (let index = 0; index < 4; index++) {
      await db.appendNode(
        sessionId,
        { role: index % 2 === 0 ? "user" : "llm", name: index % 2 === 0 ? "user" : "scripted", output: NODE_TEXT },
        { atHead: true },
      );
    }
    await db.endTurn(sessionId, turnId, { status: "idle" });
    times.push(performance.now() - started);
  }
  return { times, cpu: cpuMs() - cpuStarted };
}

/** A node file's bytes as the store writes them, for the raw baselines. */
function nodeBytes(seq: number): string {
  return dumpsPython({
    id: seq.toString(16).padStart(12, "0"),
    created_at: 1796000402.5594914,
    seq,
    role: seq % 2 === 0 ? "user" : "llm",
    name: seq % 2 === 0 ? "user" : "scripted",
    input: null,
    output: NODE_TEXT,
    caller: "",
    predecessor: seq === 0 ? "ROOT" : (seq - 1).toString(16).padStart(12, "0"),
    reads: [],
    metadata: {},
  });
}

/** Writes `count` sessions straight to disk (meta.json, folders, one registry), as a store that has lived long. */
function seedSessions(root: string, count: number): void {
  mkdirSync(root, { recursive: true });
  const entries: Record<string, unknown> = {};
  const now = Date.now() / 1000;
  for (let index = 0; index < count; index++) {
    const id = `seed_${index.toString(16).padStart(10, "0")}`;
    const dir = join(root, id);
    mkdirSync(join(dir, "history"), { recursive: true });
    mkdirSync(join(dir, "context"));
    mkdirSync(join(dir, "workdir"));
    writeFileSync(join(dir, "workdir", ".gitkeep"), "");
    const meta = { id, agent_id: "main", title: `Session ${index}`, source: "bench", created_at: now, updated_at: now };
    writeFileSync(join(dir, "meta.json"), dumpsPython({ ...meta, project_id: "default", head_id: null }));
    entries[id] = {
      ...meta,
      status: "idle",
      pinned: false,
      archived: false,
      unread: false,
      channel: null,
      peer_display: null,
      peer_id: null,
    };
  }
  writeFileSync(join(root, "index.json"), dumpsPythonIndented(entries));
}

/** Python OpenProgram's source, from OPENPROGRAM_PYTHON_SOURCE (a folder holding `openprogram/`), or why not. */
function pythonSource(): { source: string } | { skip: string } {
  const source = process.env.OPENPROGRAM_PYTHON_SOURCE;
  if (!source)
    return { skip: "OPENPROGRAM_PYTHON_SOURCE is not set (a folder holding Python OpenProgram's openprogram/)" };
  if (!existsSync(join(source, "openprogram", "store", "session", "session_store.py")))
    return { skip: `${source} does not hold openprogram/store/session/session_store.py` };
  const probe = spawnSync("python3", ["--version"], { encoding: "utf8" });
  if (probe.status !== 0) return { skip: "python3 is not on PATH" };
  return { source };
}

export async function benchTurn(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-turn-"));
  try {
    const turns = iterations(30);

    // Ours: a store of one session.
    const db = new SessionDB({ root: join(home, "one") });
    await db.createSession({ id: "bench" });
    await runTurns(db, "bench", 3);
    const one = await runTurns(db, "bench", turns);
    const turnMedian = median(one.times);

    // Raw: the durable writes a turn needs, each a temp write + fsync + rename + directory fsync of the same bytes.
    const rawDir = join(home, "raw-writes");
    mkdirSync(rawDir);
    const rawTurns: number[] = [];
    const metaText = readFileSync(join(db.root, "bench", "meta.json"), "utf8");
    for (let turn = 0; turn < turns; turn++) {
      const started = performance.now();
      for (let index = 0; index < 4; index++)
        await rawDurableWriteAsync(rawDir, `${turn}-${index}.json`, nodeBytes(index));
      await rawDurableWriteAsync(rawDir, "meta.json", metaText);
      await rawDurableWriteAsync(rawDir, "ref", `${"0".repeat(40)}\n`);
      rawTurns.push(performance.now() - started);
    }
    const rawMedian = median(rawTurns);
    report({
      package: PACKAGE,
      metric: "4-node turn (begin, 4 appends, end + commit)",
      unit: "ms",
      median: turnMedian,
      baseline: rawMedian,
      baselineLabel: `${DURABLE_WRITES_PER_TURN} raw durable writes (4 nodes, meta.json, ref)`,
      target: "<= 3x baseline",
      met: turnMedian <= 3 * rawMedian,
      samples: turns,
    });

    // Raw git: `git add -A && git commit` of the same change (4 node files and meta.json, written beforehand).
    const rawRepo = join(home, "raw-repo");
    mkdirSync(join(rawRepo, "history"), { recursive: true });
    const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
    const git = (...args: string[]): void =>
      void execFileSync("git", args, { cwd: rawRepo, env: gitEnv, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("config", "user.name", "OpenProgram");
    git("config", "user.email", "openprogram@local");
    git("commit", "-q", "--allow-empty", "-m", "session init");
    const rawCommits: number[] = [];
    for (let turn = 0; turn < turns; turn++) {
      for (let index = 0; index < 4; index++)
        writeFileSync(join(rawRepo, "history", `${turn}-${index}.json`), nodeBytes(turn * 4 + index));
      writeFileSync(join(rawRepo, "meta.json"), `${metaText}${turn}`);
      const started = performance.now();
      git("add", "-A");
      git("commit", "-q", "-m", `turn ${turn}`);
      rawCommits.push(performance.now() - started);
    }
    const rawCommitMedian = median(rawCommits);
    report({
      package: PACKAGE,
      metric: "4-node turn, beside raw git",
      unit: "ms",
      median: turnMedian,
      baseline: rawCommitMedian,
      baselineLabel: "raw git add -A + git commit of the same change",
      samples: turns,
    });

    // Python OpenProgram's store, the same turn, in this run.
    const python = pythonSource();
    if ("skip" in python) {
      process.stdout.write(`4-node turn beside Python OpenProgram: skipped (${python.skip})\n`);
    } else {
      const pythonRoot = join(home, "python");
      mkdirSync(pythonRoot);
      const script = join(import.meta.dirname, "python-turn.py");
      const output = execFileSync("python3", [script, python.source, pythonRoot, String(turns)], {
        encoding: "utf8",
        env: { ...gitEnv, HOME: home },
        maxBuffer: 1 << 24,
      });
      const measured = JSON.parse(output.trim().split("\n").pop() as string) as {
        times: number[];
        cpu_seconds: number;
      };
      const pythonMedian = median(measured.times);
      report({
        package: PACKAGE,
        metric: "4-node turn, beside Python OpenProgram",
        unit: "ms",
        median: turnMedian,
        baseline: pythonMedian,
        baselineLabel: "Python SessionStore: append_message x4 + commit_turn",
        samples: turns,
      });
      report({
        package: PACKAGE,
        metric: "CPU per 4-node turn, beside Python OpenProgram",
        unit: "ms",
        median: one.cpu / turns,
        baseline: (measured.cpu_seconds * 1000) / turns,
        baselineLabel: "Python's CPU per turn (with its git children)",
        samples: turns,
      });
    }

    // The same turn among 10,000 sessions.
    const crowdRoot = join(home, "crowd");
    seedSessions(crowdRoot, iterations(10_000));
    const crowd = new SessionDB({ root: crowdRoot });
    await crowd.createSession({ id: "bench" });
    await runTurns(crowd, "bench", 3);
    const crowded = await runTurns(crowd, "bench", turns);
    const crowdMedian = median(crowded.times);
    report({
      package: PACKAGE,
      metric: "4-node turn among 10,000 sessions",
      unit: "ms",
      median: crowdMedian,
      baseline: turnMedian,
      baselineLabel: "the same turn in a store of one",
      target: "<= 1.1x baseline",
      met: crowdMedian <= 1.1 * turnMedian,
      samples: turns,
    });

    report({
      package: PACKAGE,
      metric: "CPU per 4-node turn (process + git children)",
      unit: "ms",
      median: one.cpu / turns,
      baseline: turnMedian,
      baselineLabel: "the turn's wall time",
      samples: turns,
    });
    await db.flushRegistry();
    await crowd.flushRegistry();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
