import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomHex } from "../ids.js";
import { errnoHint } from "./errno-hint.js";
import { gitVersion } from "./git-repo.js";

/** One probe's verdict; `detail` says what to do when it failed. */
export interface HealthCheck {
  ok: boolean;
  detail: string;
}

/** Whether a store can take turns: its root writable, git usable. */
export interface StoreHealth {
  writable: HealthCheck;
  git: HealthCheck;
}

const GIT_OK_FOR_MS = 30_000;
let gitOkUntil = 0;
let gitDetail = "";

/**
 * Probes a sessions root the only sure way (creating it if needed, then
 * writing and removing a file) and checks that git runs, for readiness
 * endpoints and start-up checks. Never throws.
 */
export async function probeStore(root: string): Promise<StoreHealth> {
  return { writable: probeWritable(root), git: await probeGit() };
}

function probeWritable(root: string): HealthCheck {
  try {
    mkdirSync(root, { recursive: true, mode: 0o700 });
  } catch (error) {
    return {
      ok: false,
      detail: `The sessions root ${root} cannot be created (${errnoText(error)}); point OPENPROGRAM_HOME (or the sessions root option) at a writable directory.`,
    };
  }
  const probe = join(root, `.probe-${process.pid}-${randomHex(8)}`);
  try {
    writeFileSync(probe, "", { flag: "wx", mode: 0o600 });
  } catch (error) {
    return {
      ok: false,
      detail: `The sessions root ${root} is not writable (${errnoText(error)}); make it writable by this user or use another root.`,
    };
  } finally {
    rmSync(probe, { force: true });
  }
  return { ok: true, detail: `${root} is writable` };
}

async function probeGit(): Promise<HealthCheck> {
  if (Date.now() < gitOkUntil) return { ok: true, detail: gitDetail };
  try {
    gitDetail = await gitVersion();
    gitOkUntil = Date.now() + GIT_OK_FOR_MS;
    return { ok: true, detail: gitDetail };
  } catch (error) {
    return {
      ok: false,
      detail: `git does not run (${(error as Error).message}); every session is a git repository, so install git (e.g. apt-get install git).`,
    };
  }
}

function errnoText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const hint = errnoHint(code);
  return hint === undefined ? (code ?? (error as Error).message) : `${code}: ${hint}`;
}
