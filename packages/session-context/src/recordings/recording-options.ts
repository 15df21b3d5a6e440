import { resolve } from "node:path";
import { ProviderConfigError } from "../errors.js";
import type { ModelProvider } from "../providers/types.js";
import { RecordingProvider } from "./recording-provider.js";
import { ReplayProvider } from "./replay-provider.js";

/** Record every provider call to a file, or answer every call from one (never both). */
export interface RecordingOptions {
  /** Write every provider call to this JSONL file (started anew). */
  record?: string;
  /** Answer every provider call from this JSONL file, with no network at all. */
  replay?: string;
  /** With `replay`: deliver each call's events at the recorded pace (OPENPROGRAM_REPLAY_PACE=1, `--replay-pace`). */
  replayPace?: boolean;
}

/**
 * OPENPROGRAM_RECORD and OPENPROGRAM_REPLAY (paths, relative to `cwd`), and
 * OPENPROGRAM_REPLAY_PACE=1 (replay at the recorded pace).
 * (A resumed turn's replay state reaches child processes as OPENPROGRAM_RESUME_REPLAY, carrier.ts.)
 * OPENPROGRAM_RECORD=1 (or "true") is `useRecording`'s switch for tests, not
 * a file name, and is left to it.
 */
export function recordingOptionsFromEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): RecordingOptions {
  const record = env.OPENPROGRAM_RECORD?.trim();
  const replay = env.OPENPROGRAM_REPLAY?.trim();
  const pace = env.OPENPROGRAM_REPLAY_PACE?.trim();
  return {
    ...(record && !isSwitch(record) ? { record: resolve(cwd, record) } : {}),
    ...(replay ? { replay: resolve(cwd, replay) } : {}),
    ...(replay && pace && isSwitch(pace) ? { replayPace: true } : {}),
  };
}

/** True for OPENPROGRAM_RECORD's test switch values. */
export function isSwitch(value: string): boolean {
  return value === "1" || value.toLowerCase() === "true";
}

/** Refuses asking for both at once. */
export function checkRecordingOptions(options: RecordingOptions): void {
  if (options.record !== undefined && options.replay !== undefined) {
    throw new ProviderConfigError(
      "OPENPROGRAM_REPLAY",
      `Both recording (${options.record}) and replaying (${options.replay}) were asked for; use one of --record and --replay.`,
    );
  }
}

/**
 * The provider with recording applied: replay stands in for `live` (which is
 * then never called, and may be null when no provider is configured); record
 * wraps it.
 */
export function providerWithRecordings(live: () => ModelProvider, options: RecordingOptions): ModelProvider {
  checkRecordingOptions(options);
  if (options.replay !== undefined) return new ReplayProvider(options.replay, { pace: options.replayPace === true });
  const provider = live();
  return options.record !== undefined ? new RecordingProvider(provider, options.record) : provider;
}
