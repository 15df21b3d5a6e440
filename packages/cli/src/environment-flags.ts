import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";

/** Flags that set the environment a command runs in. */
export interface EnvironmentFlags {
  /** `--env-file <path>` (global): variables in Node's .env format; ones already set win, as with `node --env-file`. */
  envFile?: string;
  /** `--provider <name>`: as OPENPROGRAM_PROVIDER for this command (wins over the variable). */
  provider?: string;
  /** `--model <name>`: as OPENPROGRAM_MODEL for this command (wins over the variable). */
  model?: string;
  /** `--record <file>`: as OPENPROGRAM_RECORD (write every model call to this recording). */
  record?: string;
  /** `--replay <file>`: as OPENPROGRAM_REPLAY (answer every model call from this recording, offline). */
  replay?: string;
  /** `--replay-pace`: as OPENPROGRAM_REPLAY_PACE=1 (replay each call's events at the recorded pace). */
  replayPace?: boolean;
}

/** Provider names `--provider` accepts (the core's names, its local-server aliases, and none). */
export const PROVIDER_CHOICES = ["openai", "anthropic", "scripted", "none", "ollama", "vllm", "lmstudio"];

/**
 * Applies the flags to `env` before the command runs. Child processes (an
 * isolated program, the process runner) inherit the result, so they pick the
 * same provider. Throws an Error naming the file when --env-file cannot be read.
 */
export function applyEnvironmentFlags(flags: EnvironmentFlags, env: NodeJS.ProcessEnv, cwd: string): void {
  if (flags.envFile !== undefined) {
    const path = resolve(cwd, flags.envFile);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
      throw new Error(`--env-file ${flags.envFile}: ${reason}; give the path of a file of NAME=value lines.`, {
        cause: error,
      });
    }
    for (const [name, value] of Object.entries(parseEnv(text))) if (env[name] === undefined) env[name] = value;
  }
  if (flags.provider !== undefined) env.OPENPROGRAM_PROVIDER = flags.provider;
  if (flags.model !== undefined) env.OPENPROGRAM_MODEL = flags.model;
  // Absolute, so a child process started elsewhere writes or reads the same file; one flag wins over both variables.
  if (flags.record !== undefined) [env.OPENPROGRAM_RECORD, env.OPENPROGRAM_REPLAY] = [resolve(cwd, flags.record), ""];
  if (flags.replay !== undefined) [env.OPENPROGRAM_REPLAY, env.OPENPROGRAM_RECORD] = [resolve(cwd, flags.replay), ""];
  if (flags.replayPace === true) {
    if (!env.OPENPROGRAM_REPLAY?.trim())
      throw new Error("--replay-pace paces a replay: give the recording with --replay <file> (or OPENPROGRAM_REPLAY).");
    env.OPENPROGRAM_REPLAY_PACE = "1";
  }
}
