// `openprogram sessions prune --dry-run` over 10,000 sessions, the command a
// user types (issue 16's target: at most 1 s), beside `sessions list --all
// --json` over the same store in the same run, interleaved one of each per
// round. The store is written straight to disk by the core's bench seeder.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { iterations, median, report } from "@openprogram/bench-kit";
// A bench helper of the core (not its API): it writes a synthetic store of Python OpenProgram's layout.
import { seedPruneStore } from "../../session-context/bench/prune-store.js";

const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));
const SESSIONS = 10_000;
const TARGET_MS = 1000;

if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm build\` first.`);

const home = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "openprogram-cli-bench-prune-"));
try {
  const named = seedPruneStore(join(home, "sessions"), SESSIONS);
  const env = { PATH: process.env.PATH ?? "", HOME: home, OPENPROGRAM_HOME: home };
  const commands = {
    list: ["sessions", "list", "--all", "--json"],
    prune: ["sessions", "prune", "--dry-run", "--json"],
  } as const;
  const times: Record<keyof typeof commands, number[]> = { list: [], prune: [] };
  const run = (name: keyof typeof commands): number => {
    const started = performance.now();
    const result = spawnSync(process.execPath, [BIN, ...commands[name]], { env, encoding: "utf8", maxBuffer: 1 << 28 });
    const elapsed = performance.now() - started;
    if (result.status !== 0)
      throw new Error(`openprogram ${commands[name].join(" ")} exited ${result.status}: ${result.stderr}`);
    if (name === "prune" && (JSON.parse(result.stdout) as { removed: unknown[] }).removed.length !== named)
      throw new Error("sessions prune --dry-run did not name the sessions the rules name");
    return elapsed;
  };
  const rounds = iterations(10);
  for (let warmup = 0; warmup < 2; warmup++) for (const name of ["list", "prune"] as const) run(name);
  for (let round = 0; round < rounds; round++)
    for (const name of ["list", "prune"] as const) times[name].push(run(name));
  const figure = median(times.prune);
  report({
    package: "@openprogram/cli",
    metric: `openprogram sessions prune --dry-run --json over ${SESSIONS.toLocaleString("en")} sessions (${named} to remove), cold start`,
    unit: "ms",
    median: figure,
    baseline: median(times.list),
    baselineLabel: `(openprogram sessions list --all --json, same store)`,
    target: `<= ${TARGET_MS} ms`,
    met: figure <= TARGET_MS,
    samples: rounds,
  });
} finally {
  rmSync(home, { recursive: true, force: true });
}
