// Runs the built `openprogram` binary in child processes, as a user would, and
// cleans up after them: every child gets its own process group, so what it
// started (git, an isolated program) can be reaped with it.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The built binary (`dist/bin.js` of this package). */
export const CLI_BIN = fileURLToPath(new URL("../../dist/bin.js", import.meta.url));

/** What a finished CLI run left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of a CLI run. */
export interface RunCliOptions {
  /** The whole environment of the child: nothing is inherited. */
  env: Record<string, string>;
  /** Written to stdin, then stdin is closed. Absent: stdin is closed at once. */
  input?: string;
  /** Default: this process's working directory. */
  cwd?: string;
  /** Kill the child (and fail) after this long; generous, the machine is shared. Default 90 s. */
  timeoutMs?: number;
}

const started = new Set<ChildProcessWithoutNullStreams>();

/** Starts `node dist/bin.js ...args` in its own process group, with pipes for all three streams. */
export function spawnCli(args: readonly string[], options: RunCliOptions): ChildProcessWithoutNullStreams {
  if (!existsSync(CLI_BIN))
    throw new Error(
      `${CLI_BIN} is missing: build the CLI first (pnpm exec turbo run build --filter=@openprogram/cli).`,
    );
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    env: options.env,
    cwd: options.cwd ?? process.cwd(),
    stdio: "pipe",
    detached: true,
  });
  // A child that exits without reading its input (a refused argument, a missing
  // --env-file) closes the pipe under a pending write: that is the child's answer,
  // which its exit code and output carry, not an error of the run.
  child.stdin.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ECONNRESET") throw error;
  });
  started.add(child);
  return child;
}

/** Collects a child's output and resolves when it has exited and its streams are closed. */
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
      killGroup(child);
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
export function runCli(args: readonly string[], options: RunCliOptions): Promise<CliResult> {
  const child = spawnCli(args, options);
  const result = collect(child, options.timeoutMs);
  child.stdin.end(options.input ?? "");
  return result;
}

/**
 * Kills every process group a spawnCli started that still has a process in it (a
 * CLI still running, or a git it left behind when it was killed) and resolves once
 * each child has exited and each group is empty, so that removing the test's
 * directories afterwards races with nothing. Call it in afterEach/afterAll.
 */
export async function stopCliProcesses(): Promise<void> {
  const children = [...started];
  started.clear();
  await Promise.all(children.map(reap));
}

async function reap(child: ChildProcessWithoutNullStreams): Promise<void> {
  const exited =
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once("exit", () => resolve()));
  killGroup(child);
  await exited;
  // Orphans of a killed CLI (a git mid-commit) keep the group alive a little longer.
  for (let attempt = 0; attempt < 200 && groupExists(child.pid); attempt++) {
    killGroup(child);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function killGroup(child: ChildProcessWithoutNullStreams): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // The group is already gone.
  }
}

function groupExists(pgid: number | undefined): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
