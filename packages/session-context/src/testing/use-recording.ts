import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InvalidInputError, ProviderConfigError } from "../errors.js";
import { isSwitch } from "../recordings/recording-options.js";
import { RecordingMissingError } from "../recordings/recording-errors.js";
import type { RecordingProvider } from "../recordings/recording-provider.js";
import { ReplayProvider } from "../recordings/replay-provider.js";
import { createRuntime } from "../runtime/create-runtime.js";
import { resolveRuntimeConfig } from "../runtime/config.js";
import { ModelRuntime } from "../runtime/model-runtime.js";

/** Options of useRecording. */
export interface UseRecordingOptions {
  /** The folder of `__recordings__` (default: the calling test file's folder). */
  dir?: string;
  /** Where OPENPROGRAM_RECORD and the provider configuration are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Replaying: deliver each call's events at the pace they were recorded (default false: at once). */
  pace?: boolean;
}

/** The runtime a test passes to sessionContext, and what it does. */
export interface UsedRecording {
  runtime: ModelRuntime;
  /** `<dir>/__recordings__/<name>.jsonl` */
  path: string;
  mode: "record" | "replay";
  provider: RecordingProvider | ReplayProvider;
}

const RECORDING_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const OWN_FILE = fileURLToPath(import.meta.url);
// This module as a stack shows it: the built file, or its source when a test runner applies the source map.
const OWN_FRAME = /[\\/]testing[\\/]use-recording\.(?:js|ts)$/;

/**
 * A runtime for one test that replays `__recordings__/<name>.jsonl` beside
 * the test file, offline and strictly (a changed request fails naming the
 * field). With OPENPROGRAM_RECORD=1 it records the file anew against the
 * configured provider instead. A missing recording fails with the command
 * that makes it.
 */
export function useRecording(name: string, options: UseRecordingOptions = {}): UsedRecording {
  if (!RECORDING_NAME.test(name)) {
    throw new InvalidInputError(
      `useRecording(${JSON.stringify(name)}): a recording name is 1-64 letters, digits, '.', '_' or '-'.`,
    );
  }
  const env = options.env ?? process.env;
  const testFile = options.dir === undefined ? callerFile() : null;
  const dir = options.dir ?? (testFile ? dirname(testFile) : process.cwd());
  const path = join(dir, "__recordings__", `${name}.jsonl`);
  if (isSwitch(env.OPENPROGRAM_RECORD?.trim() ?? "")) {
    const { config } = resolveRuntimeConfig(env);
    if (!config) {
      throw new ProviderConfigError(
        "OPENPROGRAM_PROVIDER",
        "OPENPROGRAM_RECORD=1 records against the configured model, and none is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY or OPENPROGRAM_PROVIDER.",
      );
    }
    const runtime = createRuntime({ ...config, record: path }) as ModelRuntime;
    return { runtime, path, mode: "record", provider: runtime.provider as RecordingProvider };
  }
  if (!existsSync(path)) throw new RecordingMissingError(path, testFile);
  const provider = new ReplayProvider(path, { pace: options.pace === true });
  const model = provider.recording.calls[0]?.model ?? "replay";
  return { runtime: new ModelRuntime(provider, model), path, mode: "replay", provider };
}

/** The file of the first stack frame outside this module: the test that called useRecording. */
function callerFile(): string | null {
  for (const line of (new Error().stack ?? "").split("\n").slice(1)) {
    const found = /\(?((?:file:\/\/)?\/[^():]+):\d+:\d+\)?\s*$/.exec(line.trim());
    if (!found?.[1]) continue;
    const file = found[1].startsWith("file://") ? fileURLToPath(found[1]) : found[1];
    if (file !== OWN_FILE && !OWN_FRAME.test(file)) return file;
  }
  return null;
}
