// Runs the real built binary (dist/bin.js) in a child process, as a user
// would: a temp OPENPROGRAM_HOME and a clean environment (no inherited
// OPENAI_* or OPENPROGRAM_* variables).
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createTempStore, type TempStore } from "@openprogram/session-context/testing";

/** The built binary. */
export const CLI_BIN = fileURLToPath(new URL("../../dist/bin.js", import.meta.url));
/** The CLI package directory (its package.json holds the version). */
export const CLI_DIR = fileURLToPath(new URL("../..", import.meta.url));
/** The Python OpenProgram sessions fixture of the core. */
export const PYTHON_FIXTURE = fileURLToPath(
  new URL("../../../session-context/test/fixtures/python-openprogram-sessions.tar.gz", import.meta.url),
);

/** Absolute path of a test program in test/programs/. */
export function program(name: string): string {
  return fileURLToPath(new URL(`../programs/${name}`, import.meta.url));
}

/** What a finished CLI run left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A temp OPENPROGRAM_HOME with its store, and the clean environment to run the CLI in. */
export interface CliHome extends TempStore {
  /** The environment for the CLI: PATH, HOME, TZ, OPENPROGRAM_HOME and `extra`, nothing inherited. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Writes a file under the home and returns its path. */
  file(name: string, content: string): string;
  /** Writes a scripted-provider reply file and returns the env that selects it (with a request log). */
  scripted(replies: unknown[]): { env: Record<string, string>; log: string };
}

/** A fresh home under the system temp dir. */
export function createCliHome(): CliHome {
  const store = createTempStore("openprogram-cli-test-");
  const file = (name: string, content: string): string => {
    const path = join(store.home, name);
    writeFileSync(path, content);
    return path;
  };
  let scripts = 0;
  return {
    ...store,
    env: (extra = {}) => ({
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: store.home,
      TZ: "UTC",
      LANG: "C.UTF-8",
      OPENPROGRAM_HOME: store.home,
      ...extra,
    }),
    file,
    scripted(replies) {
      scripts++;
      const script = file(`script-${scripts}.json`, JSON.stringify(replies));
      const log = join(store.home, `script-${scripts}.log.jsonl`);
      return { env: { OPENPROGRAM_SCRIPT: script, OPENPROGRAM_SCRIPT_LOG: log }, log };
    },
  };
}

/** Extracts the Python fixtures into `<home>/sessions`. */
export function extractPythonFixtures(home: string): void {
  mkdirSync(home, { recursive: true });
  execFileSync("tar", ["xzf", PYTHON_FIXTURE, "-C", home]);
}

/** Options of a CLI run. */
export interface RunOptions {
  env: Record<string, string>;
  /** Written to stdin, then stdin is closed. Absent: stdin is closed at once. */
  input?: string;
  cwd?: string;
  /** Kill the child (and fail) after this long; generous, the machine is shared. */
  timeoutMs?: number;
}

/** Starts `node dist/bin.js ...args` with pipes for all three streams. */
export function spawnCli(args: readonly string[], options: RunOptions): ChildProcessWithoutNullStreams {
  if (!existsSync(CLI_BIN))
    throw new Error(`${CLI_BIN} is missing: build the package first (npx tsc -p tsconfig.build.json).`);
  return spawn(process.execPath, [CLI_BIN, ...args], { env: options.env, cwd: options.cwd ?? CLI_DIR, stdio: "pipe" });
}

/** Collects a child's output and resolves when it exits. */
export function collect(
  child: ChildProcessWithoutNullStreams,
  timeoutMs = 90_000,
): Promise<CliResult> & { output(): { stdout: string; stderr: string } } {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`openprogram did not exit within ${timeoutMs} ms.\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return Object.assign(done, { output: () => ({ stdout, stderr }) });
}

/** Runs the CLI to completion. */
export function runCli(args: readonly string[], options: RunOptions): Promise<CliResult> {
  const child = spawnCli(args, options);
  const result = collect(child, options.timeoutMs);
  child.stdin.end(options.input ?? "");
  return result;
}

/** Resolves once `check()` is true, polling; rejects after `timeoutMs` with `what`. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The `session: <id>` line's id on stderr (throws when it is missing). */
export function sessionIdFrom(stderr: string): string {
  const match = /^session: (\S+) \(--session \1 to continue\)$/m.exec(stderr);
  if (!match?.[1]) throw new Error(`No session line on stderr:\n${stderr}`);
  return match[1];
}

/** The JSON lines of a scripted-provider request log. */
export function readRequestLog(
  path: string,
): Array<{ model: string; messages: Array<{ role: string; content: string }> }> {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { model: string; messages: Array<{ role: string; content: string }> });
}
