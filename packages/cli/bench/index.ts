// Cold start of the built `openprogram` binary (issue 4's target: at most
// 250 ms median for `--help` and for `sessions list` over 1,000 sessions),
// beside `node -e 0` measured in the same run. The runs are interleaved
// (one of each per round) so that load from other work on this shared
// machine falls on every figure alike. Run `pnpm build` first.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { iterations, median, percentile, report } from "@openprogram/bench-kit";
import { openStore } from "@openprogram/session-context/store";

const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const TARGET_MS = 250;
const SESSIONS = 1000;

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm build\` first.`);

const home = mkdtempSync(join(tmpdir(), "openprogram-cli-bench-"));
try {
  const db = openStore({ root: join(home, "sessions") });
  for (let index = 0; index < SESSIONS; index++)
    await db.createSession({ source: "cli", title: `bench session ${index}` });
  const env = { PATH: process.env.PATH ?? "", HOME: home, OPENPROGRAM_HOME: home };

  const commands = {
    baseline: [process.execPath, "-e", "0"],
    help: [process.execPath, BIN, "--help"],
    list: [process.execPath, BIN, "sessions", "list"],
    // Issue 18: the store's usage from the registry, the store's usage cache and a stat per session (no target
    // for the cold start; the core's benchmark times the answer itself against a scan of every node file).
    usage: [process.execPath, BIN, "sessions", "usage"],
    // Not a target: what importing the core alone costs, to locate the time `sessions list` spends.
    coreImport: [process.execPath, "--input-type=module", "-e", "await import('@openprogram/session-context')"],
  } as const;
  const times: Record<keyof typeof commands, number[]> = {
    baseline: [],
    help: [],
    list: [],
    usage: [],
    coreImport: [],
  };
  const run = (name: keyof typeof commands): number => {
    const [command, ...args] = commands[name];
    const started = performance.now();
    const result = spawnSync(command, args, {
      env,
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
    });
    const elapsed = performance.now() - started;
    if (result.status !== 0) throw new Error(`${commands[name].join(" ")} exited ${result.status}: ${result.stderr}`);
    if (name === "list" && result.stdout.split("\n").length < SESSIONS + 1)
      throw new Error("sessions list did not print every session");
    return elapsed;
  };

  const rounds = iterations(20);
  for (let warmup = 0; warmup < 3; warmup++)
    for (const name of Object.keys(commands) as Array<keyof typeof commands>) run(name);
  for (let round = 0; round < rounds; round++) {
    for (const name of Object.keys(commands) as Array<keyof typeof commands>) times[name].push(run(name));
  }

  const baseline = median(times.baseline);
  const figure = (metric: string, values: number[], target?: string, met?: boolean): void =>
    report({
      package: "@openprogram/cli",
      metric,
      unit: "ms",
      median: median(values),
      baseline,
      baselineLabel: "node -e 0",
      ...(target !== undefined ? { target, met } : {}),
      samples: values.length,
    });
  figure("openprogram --help, cold start", times.help, `<= ${TARGET_MS} ms`, median(times.help) <= TARGET_MS);
  figure(
    `openprogram sessions list (${SESSIONS} sessions), cold start`,
    times.list,
    `<= ${TARGET_MS} ms`,
    median(times.list) <= TARGET_MS,
  );
  figure(`openprogram sessions usage (${SESSIONS} sessions), cold start`, times.usage);
  figure(
    "import @openprogram/session-context alone (no target; what sessions list pays for the core)",
    times.coreImport,
  );
  process.stdout.write(
    `p90: --help ${percentile(times.help, 90).toFixed(0)} ms, sessions list ${percentile(times.list, 90).toFixed(0)} ms, core import ${percentile(times.coreImport, 90).toFixed(0)} ms, node -e 0 ${percentile(times.baseline, 90).toFixed(0)} ms (${rounds} rounds)\n`,
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}

// Retention (issue 16): `sessions prune --dry-run` over 10,000 sessions.
await import("./prune.js");
