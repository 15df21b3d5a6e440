#!/usr/bin/env node
// The two newcomer commands, runnable on a machine with only Node 20 and git:
//   npm run demo [-- "<task>"]   a research session end to end
//   npm test                     build, every test, typecheck and lint; ends with the
//                                wall time of each package's tests and "N passed, N failed"
//   npm run pack:all [-- <dir>]  installable tarballs of every package (scripts/pack-all.mjs)
// Installs what they need first: pnpm (pinned, into .tools/, no global
// install), the workspace's dependencies, and, for the browser test, Debian's
// Chromium when running as root on Debian. Plain Node only: nothing else is
// installed when this starts.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { summarizeReports, writeSteps } from "./test-summary.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const PNPM_VERSION = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).packageManager.split("@")[1];
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: "1", TURBO_NO_UPDATE_NOTIFIER: "1" };

function say(message) {
  process.stderr.write(`[openprogram] ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env, ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** pnpm at the pinned version on PATH (turbo needs the binary there). */
function ensurePnpm() {
  const probe = spawnSync("pnpm", ["--version"], { env, encoding: "utf8" });
  if (probe.status === 0 && probe.stdout.trim() === PNPM_VERSION) return;
  const toolsBin = join(root, ".tools", "node_modules", ".bin");
  if (!existsSync(join(toolsBin, "pnpm"))) {
    say(`installing pnpm ${PNPM_VERSION} into .tools/`);
    mkdirSync(join(root, ".tools"), { recursive: true });
    const status = run("npm", [
      "install",
      "--prefix",
      join(root, ".tools"),
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      `pnpm@${PNPM_VERSION}`,
    ]);
    if (status !== 0) throw new Error("Could not install pnpm with npm; check access to the npm registry.");
  }
  env.PATH = `${toolsBin}${delimiter}${env.PATH ?? ""}`;
}

/** `pnpm install --frozen-lockfile`, skipped when the lockfile has not changed since the last install. */
function ensureDependencies() {
  const lock = readFileSync(join(root, "pnpm-lock.yaml"));
  const hash = createHash("sha256").update(lock).update(process.version).digest("hex");
  const marker = join(root, "node_modules", ".openprogram-install");
  if (existsSync(marker) && readFileSync(marker, "utf8") === hash) return;
  say("installing dependencies (pnpm install --frozen-lockfile)");
  if (run("pnpm", ["install", "--frozen-lockfile"]) !== 0) throw new Error("pnpm install failed (see above).");
  writeFileSync(marker, hash);
}

/** Debian's Chromium for the dispatcher's browser test. */
function ensureChromium() {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (existsSync(path)) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (isRoot && existsSync("/usr/bin/apt-get")) {
    say("installing Debian's chromium for the browser test (apt-get install -y chromium)");
    run("apt-get", ["update", "-qq"]);
    if (
      run("apt-get", ["install", "-y", "-qq", "chromium"], { env: { ...env, DEBIAN_FRONTEND: "noninteractive" } }) === 0
    )
      return;
  }
  say(
    `Chromium is not at ${path}: the browser test will fail. Install it (sudo apt-get install -y chromium) or set CHROMIUM_PATH.`,
  );
}

/**
 * The local PostgreSQL the dispatcher's cluster tests use (127.0.0.1:5432): started when it is down, as root,
 * if a Debian cluster exists; otherwise a message says what the cluster tests need.
 */
function ensurePostgres() {
  const probe = spawnSync("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-q"], { env });
  if (probe.status === 0) return;
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql") : [];
  if (isRoot && versions.length > 0 && existsSync(`/etc/postgresql/${versions[0]}/main`)) {
    say(`starting PostgreSQL ${versions[0]} for the cluster tests (pg_ctlcluster ${versions[0]} main start)`);
    if (run("pg_ctlcluster", ["--skip-systemctl-redirect", versions[0], "main", "start"]) === 0) return;
  }
  say(
    "PostgreSQL is not running at 127.0.0.1:5432: the dispatcher's cluster tests will fail. Start it " +
      "(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start), or set OPENPROGRAM_TEST_POSTGRES_URL.",
  );
}

/**
 * Runs the lanes at once. A lane is `turbo run <args>`, or a list of them run one after another (each to its end,
 * as --continue does); output is inherited, prefixed by package. Resolves with each lane's status (its first
 * failure, or 0), its steps' statuses and its wall time.
 */
function runLanes(lanes) {
  const started = Date.now();
  const turbo = (args) =>
    new Promise((resolve, reject) => {
      // Turbo's own flags go before a `--`, after which the arguments go to each task's script.
      const split = args.includes("--") ? args.indexOf("--") : args.length;
      const turboArgs = [...args.slice(0, split), "--continue", "--output-logs=new-only", ...args.slice(split)];
      const child = spawn("pnpm", ["exec", "turbo", "run", ...turboArgs], { cwd: root, stdio: "inherit", env });
      child.on("error", reject);
      child.on("close", (code) => resolve(code ?? 1));
    });
  return Promise.all(
    lanes.map(async (lane) => {
      const statuses = [];
      for (const args of Array.isArray(lane[0]) ? lane : [lane]) statuses.push(await turbo(args));
      return {
        status: statuses.find((code) => code !== 0) ?? 0,
        steps: statuses,
        seconds: (Date.now() - started) / 1000,
      };
    }),
  );
}

/** The first failing status of the lanes, or 0. */
const firstFailure = (lanes) => lanes.find((lane) => lane.status !== 0)?.status ?? 0;

// The light sets in three lanes of about equal length. Measured in npm test on 2026-12-06 (test files sharing
// their modules): the core's 311 s, each shard of the CLI's 228-235 s (its child processes), the dispatcher's
// 69 s, the process runner's 57 s, mcp's 17 s, resilience's 15 s, research's 10 s. The core's set has a lane of its
// own; each shard of the CLI's shares one with some of the others.
const CORE_LIGHT_SET = "@openprogram/session-context";
const SHARDED_LIGHT_SET = "@openprogram/cli";
const BESIDE_FIRST_SHARD = ["@openprogram/dispatcher", "@openprogram/research"];

async function test() {
  ensurePnpm();
  ensureDependencies();
  ensureChromium();
  ensurePostgres();
  // Every package's vitest writes a JSON report here; the summary at the end sums them.
  const reportDir = process.env.OPENPROGRAM_TEST_REPORT_DIR ?? join(root, "test-results");
  if (!process.env.OPENPROGRAM_TEST_REPORT_DIR) rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(reportDir, { recursive: true });
  env.OPENPROGRAM_TEST_REPORT_DIR = reportDir;
  // The phases and their wall times, for the last lines; `phase` resolves with each lane's status and time.
  const phases = [];
  const phase = async (name, lanes) => {
    const results = await runLanes(lanes);
    phases.push(`${name} ${Math.max(...results.map((lane) => lane.seconds)).toFixed(0)} s`);
    return results;
  };
  const built = firstFailure(await phase("build", [["build"]]));
  // Type-aware lint of every package runs in this npm test (below), and its errors fail it: the test
  // that lints the whole tree again (lint-boundary, 15-40 s) may say so and stop there.
  env.OPENPROGRAM_TREE_LINTED = "1";
  // Three light sets at a time (each vitest runs one file at a time on two cores), in the lanes above: the
  // core's set, and each shard of the CLI's, then the others; the third lane takes every package not named
  // (the process runner's, mcp's, resilience's, and any new one). The build is done, so each runs only its tests
  // (--only).
  const only = (names) => ["test", "--only", "--concurrency=1", ...names.map((name) => `--filter=${name}`)];
  const shard = (index) => [...only([SHARDED_LIGHT_SET]), "--", `--shard=${index}/2`];
  const named = [CORE_LIGHT_SET, SHARDED_LIGHT_SET, ...BESIDE_FIRST_SHARD];
  const light = firstFailure(
    await phase("light tests", [
      only([CORE_LIGHT_SET]),
      [shard(1), only(BESIDE_FIRST_SHARD)],
      [shard(2), ["test", "--only", "--concurrency=1", ...named.map((name) => `--filter=!${name}`)]],
    ]),
  );
  // The heavy tests (kill loops, hundreds of commits, a browser, npm installs) after them, each package's one
  // file at a time: each set is sized for a machine where no other heavy set runs beside it. Measured in npm test
  // on 2026-12-06: resilience's set 186-218 s, install's 101-186 s (it resolves afresh from the registry), the
  // checks (typecheck and type-aware lint of each package, one task at a time) 251-314 s, parity's 59-73 s, the
  // core's 31-43 s, the process runner's 6-11 s. The dispatcher's (a browser, replica processes, 8 MB replies)
  // took 146 s alone, 232 s with the checks beside it, and left a third of the two cores idle alone (vmstat):
  // install's set, which waits on the registry as much as it computes, runs beside it. Then the others in two
  // lanes: resilience's and the core's in one (about 236 s), the checks (one tsc -b and one ESLint, about 153 s
  // there), parity's and the process runner's in the other.
  const FIRST_HEAVY_SETS = ["@openprogram/dispatcher", "@openprogram/install-tests"];
  const BESIDE_CHECKS = ["@openprogram/resilience-tests", "@openprogram/session-context"];
  const heavyOnly = (filters) => ["test:heavy", "--only", "--concurrency=1", ...filters];
  const heavyFirst = firstFailure(
    await phase(
      "heavy tests of the dispatcher and install",
      FIRST_HEAVY_SETS.map((name) => heavyOnly([`--filter=${name}`])),
    ),
  );
  const [heavyLane, checksLane] = await phase("the other heavy tests, with typecheck and lint beside them", [
    heavyOnly(BESIDE_CHECKS.map((name) => `--filter=${name}`)),
    [
      // The whole tree in one tsc (build mode) and one ESLint: each package's own typecheck and lint parse the
      // same libraries and the core's types again (measured alone: 119 s against 172 s for the per-package tasks).
      ["//#typecheck:tree", "//#lint:tree", "//#lint:root", "--only", "--concurrency=1"],
      heavyOnly([...FIRST_HEAVY_SETS, ...BESIDE_CHECKS].map((name) => `--filter=!${name}`)),
    ],
  ]);
  phases.push(`(typecheck and lint, then the remaining heavy sets: ${checksLane.seconds.toFixed(0)} s of it)`);
  const heavy = heavyFirst || heavyLane.status || checksLane.steps[1];
  const checks = checksLane.steps[0];
  say(phases.join("; "));
  writeSteps(reportDir, [
    { name: "build", set: "checks", status: built },
    { name: "typecheck and lint", set: "checks", status: checks },
    { name: "light tests", set: "light", status: light },
    { name: "heavy tests", set: "heavy", status: heavy },
  ]);
  const summary = summarizeReports(reportDir, built || light || heavy || checks);
  process.stdout.write(`${summary.lines.join("\n")}\n`);
  return summary.failed === 0 ? 0 : 1;
}

function demo(args) {
  ensurePnpm();
  ensureDependencies();
  if (run("pnpm", ["exec", "turbo", "run", "build", "--filter=@openprogram/cli...", "--output-logs=errors-only"]) !== 0)
    return 1;
  const demoRoot = join(root, ".demo");
  const demoEnv = { ...env, OPENPROGRAM_HOME: process.env.OPENPROGRAM_HOME ?? join(demoRoot, "home") };
  const configured = execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      "import { resolveRuntimeConfig } from '@openprogram/session-context/runtime'; try { const r = resolveRuntimeConfig(); process.stdout.write(r.config ? r.config.provider : 'none'); } catch (e) { process.stdout.write('error: ' + e.message); }",
    ],
    { cwd: join(root, "packages", "cli"), env: demoEnv, encoding: "utf8" },
  );
  if (configured.startsWith("error: ")) {
    say(configured);
    return 2;
  }
  if (configured === "none") {
    say(
      "No model is configured, so this runs the canned demo: scripted replies from packages/research/demo/replies.json, labelled [canned demo output].",
    );
    say(
      'To use a real model instead: OPENAI_API_KEY=sk-... npm run demo -- "<task>"   (or OPENAI_BASE_URL=http://localhost:11434/v1 OPENPROGRAM_MODEL=llama3.1 for Ollama)',
    );
    demoEnv.OPENPROGRAM_PROVIDER = "scripted";
    demoEnv.OPENPROGRAM_SCRIPT = join(root, "packages", "research", "demo", "replies.json");
  } else {
    say(`Using the configured ${configured} provider.`);
  }
  const task = args.join(" ").trim() || "Survey how to make LLM agents reliable, then propose and write up one idea.";
  // The harness writes artifacts to ./research/<session id> of its working directory.
  mkdirSync(demoRoot, { recursive: true });
  say(
    `sessions are stored under ${demoEnv.OPENPROGRAM_HOME}/sessions; artifacts go under ${join(demoRoot, "research")}/<session id>`,
  );
  return run(process.execPath, [join(root, "packages", "cli", "dist", "bin.js"), "research", task], {
    env: demoEnv,
    cwd: demoRoot,
  });
}

/** `npm run pack:all -- [dir]`: installable tarballs of every package (scripts/pack-all.mjs). */
function pack(args) {
  ensurePnpm();
  ensureDependencies();
  return run(process.execPath, [join(root, "scripts", "pack-all.mjs"), ...args]);
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === "test") process.exitCode = await test();
  else if (command === "demo") process.exitCode = demo(rest);
  else if (command === "pack") process.exitCode = pack(rest);
  else {
    say("usage: node scripts/bootstrap.mjs test | demo [task] | pack [dir]");
    process.exitCode = 2;
  }
} catch (error) {
  say(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
}
