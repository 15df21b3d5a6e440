// Shared by the kill -9 tests: a home for CLI runs, a CLI run that can be
// killed as a crash would, kill points spread over a run, and the checks a
// store must pass after a kill.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { collect, spawnCli, stopCliProcesses, type CliResult } from "@openprogram/cli/testing";
import { sessionContext } from "@openprogram/session-context";
import { SessionDB } from "@openprogram/session-context/store";
import { removeTree } from "@openprogram/session-context/testing";
import { expect } from "vitest";

/** A temp home for CLI runs: its sessions root and the environment that points the CLI at it. */
export interface KillHome {
  home: string;
  root: string;
  /** PATH, HOME, OPENPROGRAM_HOME and the given provider variables; nothing else is inherited. */
  env: Record<string, string>;
  /** Reaps every CLI process group (a killed CLI can leave its git running), then removes the home. */
  cleanup(): Promise<void>;
}

/** Creates a home for kill tests; `providerEnv` says which model the runs talk to. */
export function createKillHome(prefix: string, providerEnv: Record<string, string>): KillHome {
  const home = mkdtempSync(join(tmpdir(), prefix));
  return {
    home,
    root: join(home, "sessions"),
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      LANG: "C.UTF-8",
      OPENPROGRAM_HOME: home,
      ...providerEnv,
    },
    cleanup: async () => {
      await stopCliProcesses();
      removeTree(home);
    },
  };
}

/** A CLI run in its own process group. */
export interface KillableRun {
  /** Resolves with the exit and the output once the process is gone. */
  exited: Promise<CliResult>;
  /** SIGKILL of the CLI process only, as a crash would: what it started (git) carries on. */
  kill(): void;
}

/** Starts `openprogram ...args` with stdin closed. */
export function startKillable(args: readonly string[], env: Record<string, string>, cwd?: string): KillableRun {
  const child = spawnCli(args, { env, ...(cwd !== undefined ? { cwd } : {}) });
  child.stdin.end();
  return { exited: collect(child), kill: () => child.kill("SIGKILL") };
}

/**
 * `count` kill delays over the part [from, to) of a run that lasts `runMs`:
 * one at a random point of each equal slice, so the kills cover the whole
 * part whatever the random draws.
 */
export function spreadKillDelays(count: number, runMs: number, from = 0, to = 1): number[] {
  return Array.from({ length: count }, (_, index) =>
    Math.round((from + ((index + Math.random()) / count) * (to - from)) * runMs),
  );
}

/** Runs `run`, waits `delayMs`, kills it and waits for it to be gone. */
export async function killAfter(run: KillableRun, delayMs: number): Promise<CliResult> {
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  run.kill();
  return run.exited;
}

/**
 * Checks the store as a freshly started process sees it once it opened the
 * session for a turn: in the registry, no status stuck, every node file whole
 * JSON, no seq twice, no temp file where a node belongs, nothing left running.
 */
export async function assertConsistentAfterKill(root: string, sessionId: string): Promise<void> {
  const db = new SessionDB({ root });
  // Reads report the status as recorded; entering the session for a turn recovers a killed turn.
  await sessionContext({ db, sessionId, runtime: null, fromEnvironment: false }, () => undefined);
  const record = await db.getSession(sessionId);
  expect(record, "the session is still in the registry").not.toBeNull();
  expect(["running", "needs_input"], "the status is not stuck").not.toContain(record?.status);
  const history = join(root, sessionId, "history");
  const seqs = new Set<number>();
  for (const file of readdirSync(history)) {
    expect(file, "no temp file is left where a node belongs").toMatch(
      /^\d{4,}-[ulc]-[0-9a-f]{12}\.json$|^\..*\.tmp-[0-9a-f]+$/,
    );
    if (file.startsWith(".")) continue;
    const node = JSON.parse(readFileSync(join(history, file), "utf8")) as { seq: number };
    expect(seqs.has(node.seq), `seq ${node.seq} is not duplicated`).toBe(false);
    seqs.add(node.seq);
  }
  const loaded = await db.readHistory(sessionId);
  expect(loaded.problems).toEqual([]);
  expect(
    loaded.nodes.filter((node) => node.metadata.status === "running" || node.metadata.status === "waiting"),
  ).toEqual([]);
}
