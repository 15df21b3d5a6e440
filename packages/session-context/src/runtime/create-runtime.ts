import { statSync } from "node:fs";
import { ProviderConfigError } from "../errors.js";
import { AnthropicProvider } from "../providers/anthropic.js";
import { OpenAIChatProvider } from "../providers/openai.js";
import { ScriptedProvider } from "../providers/scripted.js";
import type { ModelProvider } from "../providers/types.js";
import {
  providerWithRecordings,
  recordingOptionsFromEnv,
  type RecordingOptions,
} from "../recordings/recording-options.js";
import { ReplayProvider } from "../recordings/replay-provider.js";
import { configPath, DEFAULT_MODELS, findProjectConfig, resolveRuntimeConfig, type RuntimeConfig } from "./config.js";
import { ModelRuntime } from "./model-runtime.js";
import { trustedProjectsPath } from "./project-trust.js";
import type { CompactionSettings } from "../compaction/compaction-settings.js";
import type { Runtime } from "./types.js";

/** A runtime over a provider object you built yourself. */
export interface ProviderRuntimeConfig {
  provider: ModelProvider;
  model: string;
  maxTokens?: number;
  temperature?: number;
  /** The model's window, how much recent conversation a compaction keeps, whether to compact by itself. */
  compaction?: CompactionSettings;
}

let cached: { key: string; runtime: Runtime | null } | null = null;

/**
 * Builds a runtime. With no argument it reads the configuration (environment
 * over the project's `openprogram.config.json`, over `$OPENPROGRAM_HOME/config.json`) and returns null when no provider is
 * configured; entries share the result while the configuration is unchanged,
 * so a scripted reply list is consumed once per process, in order.
 */
export function createRuntime(config?: (RuntimeConfig | ProviderRuntimeConfig) & RecordingOptions): Runtime | null {
  if (config !== undefined) return buildRuntime(config, config);
  const key = configurationKey();
  if (cached && cached.key === key) return cached.runtime;
  const resolved = resolveRuntimeConfig();
  const recordings = recordingOptionsFromEnv();
  let runtime: Runtime | null = null;
  if (resolved.config) {
    // Replaying, the recording's model unless one was chosen: a default would only fail to match.
    const chosenModel = resolved.sources.model !== undefined && resolved.sources.model !== "default";
    runtime = buildRuntime(chosenModel ? resolved.config : { ...resolved.config, model: undefined }, recordings);
  } else if (recordings.replay !== undefined) {
    const provider = new ReplayProvider(recordings.replay, { pace: recordings.replayPace === true });
    runtime = new ModelRuntime(provider, provider.recording.calls[0]?.model ?? "replay");
  }
  cached = { key, runtime };
  return runtime;
}

function buildRuntime(config: RuntimeConfig | ProviderRuntimeConfig, recordings: RecordingOptions): Runtime {
  if (typeof config.provider === "object") {
    const { model, maxTokens, temperature, compaction } = config;
    const live = config.provider;
    return new ModelRuntime(
      providerWithRecordings(() => live, recordings),
      model,
      {
        maxTokens,
        temperature,
        compaction,
      },
    );
  }
  const settings = config;
  const provider = providerWithRecordings(() => buildProvider(settings), recordings);
  const recordedModel = provider instanceof ReplayProvider ? provider.recording.calls[0]?.model : undefined;
  const model = settings.model ?? recordedModel ?? DEFAULT_MODELS[settings.provider];
  return new ModelRuntime(provider, model, {
    maxTokens: settings.maxTokens,
    temperature: settings.temperature,
    compaction: definedSettings({
      contextWindow: settings.contextWindow,
      keepRecentTokens: settings.keepRecentTokens,
      autoCompact: settings.autoCompact,
    }),
  });
}

function buildProvider(config: RuntimeConfig): ModelProvider {
  switch (config.provider) {
    case "openai": {
      if (!config.apiKey && !config.baseUrl) {
        throw new ProviderConfigError(
          "OPENAI_API_KEY",
          "The openai provider needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local OpenAI-compatible server).",
        );
      }
      // Local OpenAI-compatible servers accept any key; the SDK insists on one.
      return new OpenAIChatProvider({ apiKey: config.apiKey ?? "not-needed", ...optional(config) });
    }
    case "anthropic": {
      if (!config.apiKey)
        throw new ProviderConfigError("ANTHROPIC_API_KEY", "The anthropic provider needs ANTHROPIC_API_KEY.");
      return new AnthropicProvider({ apiKey: config.apiKey, ...optional(config) });
    }
    case "scripted": {
      const log = config.scriptLog ? { logPath: config.scriptLog } : {};
      if (typeof config.script === "string") return ScriptedProvider.fromFile(config.script, log);
      if (Array.isArray(config.script)) return new ScriptedProvider(config.script, log);
      throw new ProviderConfigError(
        "OPENPROGRAM_SCRIPT",
        "The scripted provider needs OPENPROGRAM_SCRIPT=<path to a JSON array of replies>.",
      );
    }
    default: {
      const unknown: never = config.provider;
      throw new ProviderConfigError(
        "OPENPROGRAM_PROVIDER",
        `Unknown provider ${JSON.stringify(unknown)}; use openai, anthropic or scripted.`,
      );
    }
  }
}

function definedSettings(settings: CompactionSettings): CompactionSettings {
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

function optional(config: RuntimeConfig): { baseUrl?: string; timeoutMs?: number; maxRetries?: number } {
  return {
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(config.maxRetries !== undefined ? { maxRetries: config.maxRetries } : {}),
  };
}

const CONFIG_VARIABLES = [
  "OPENPROGRAM_HOME",
  "OPENPROGRAM_PROVIDER",
  "OPENPROGRAM_MODEL",
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "OPENPROGRAM_SCRIPT",
  "OPENPROGRAM_SCRIPT_LOG",
  "OPENPROGRAM_MAX_RETRIES",
  "OPENPROGRAM_MAX_TOKENS",
  "OPENPROGRAM_CONTEXT_WINDOW",
  "OPENPROGRAM_KEEP_RECENT_TOKENS",
  "OPENPROGRAM_RECORD",
  "OPENPROGRAM_REPLAY",
  "OPENPROGRAM_REPLAY_PACE",
];

function configurationKey(): string {
  // The trust file too: revoking a project's trust must not leave its runtime cached.
  const files = [configPath(), findProjectConfig(), trustedProjectsPath()].map((path) => {
    const file = path === null ? undefined : statSync(path, { throwIfNoEntry: false });
    return file ? `${path}:${file.mtimeMs}:${file.size}` : "-";
  });
  const values = CONFIG_VARIABLES.map((name) => process.env[name] ?? "");
  return [...values, ...files].join("\u0000");
}
