import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ProviderConfigError } from "../errors.js";
import type { ScriptEntry } from "../providers/scripted.js";
import { openProgramHome } from "../store/default-root.js";

/** Provider names `createRuntime` understands. */
export type ProviderName = "openai" | "anthropic" | "scripted";

/** Everything needed to build a runtime. */
export interface RuntimeConfig {
  provider: ProviderName;
  model?: string;
  /** OpenAI-compatible (or Anthropic) base URL. */
  baseUrl?: string;
  apiKey?: string;
  /** scripted: a path to a JSON reply file, or the replies themselves. */
  script?: string | ScriptEntry[];
  /** scripted: append each request body as a JSON line to this file. */
  scriptLog?: string;
  maxTokens?: number;
  temperature?: number;
  timeoutMs?: number;
  maxRetries?: number;
}

/** Where a resolved configuration came from, for messages like `openprogram serve`'s banner. */
export interface ResolvedRuntimeConfig {
  config: RuntimeConfig | null;
  /** e.g. "OPENPROGRAM_PROVIDER", "OPENAI_API_KEY", "config.json", "none". */
  origin: string;
  /** True when the configuration says "no provider" on purpose (OPENPROGRAM_PROVIDER=none). */
  explicitlyNone: boolean;
}

/** Default model per provider when OPENPROGRAM_MODEL is not set. */
export const DEFAULT_MODELS: Record<ProviderName, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-sonnet-4-5",
  scripted: "scripted",
};

interface FileConfig extends Partial<Omit<RuntimeConfig, "provider">> {
  provider?: string;
}

/**
 * The runtime configuration from the environment, over `$OPENPROGRAM_HOME/config.json`.
 * Never depends on the entry point. Variables: OPENPROGRAM_PROVIDER,
 * OPENPROGRAM_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY,
 * ANTHROPIC_BASE_URL, OPENPROGRAM_SCRIPT, OPENPROGRAM_SCRIPT_LOG,
 * OPENPROGRAM_MAX_RETRIES, OPENPROGRAM_MAX_TOKENS.
 */
export function resolveRuntimeConfig(env: NodeJS.ProcessEnv = process.env): ResolvedRuntimeConfig {
  const file = readConfigFile(env);
  const explicit = nonEmpty(env.OPENPROGRAM_PROVIDER) ?? file.provider;
  if (explicit === "none")
    return {
      config: null,
      origin: env.OPENPROGRAM_PROVIDER ? "OPENPROGRAM_PROVIDER" : "config.json",
      explicitlyNone: true,
    };
  let provider: ProviderName;
  let origin: string;
  if (explicit !== undefined) {
    if (explicit !== "openai" && explicit !== "anthropic" && explicit !== "scripted") {
      const variable = env.OPENPROGRAM_PROVIDER ? "OPENPROGRAM_PROVIDER" : configPath(env);
      throw new ProviderConfigError(
        variable,
        `Unknown provider ${JSON.stringify(explicit)} in ${variable}; use openai, anthropic, scripted or none.`,
      );
    }
    provider = explicit;
    origin = env.OPENPROGRAM_PROVIDER ? "OPENPROGRAM_PROVIDER" : "config.json";
  } else if (nonEmpty(env.OPENPROGRAM_SCRIPT)) {
    [provider, origin] = ["scripted", "OPENPROGRAM_SCRIPT"];
  } else if (nonEmpty(env.OPENAI_BASE_URL) || nonEmpty(env.OPENAI_API_KEY)) {
    [provider, origin] = ["openai", nonEmpty(env.OPENAI_BASE_URL) ? "OPENAI_BASE_URL" : "OPENAI_API_KEY"];
  } else if (nonEmpty(env.ANTHROPIC_API_KEY)) {
    [provider, origin] = ["anthropic", "ANTHROPIC_API_KEY"];
  } else {
    return { config: null, origin: "none", explicitlyNone: false };
  }
  const config: RuntimeConfig = {
    provider,
    model: nonEmpty(env.OPENPROGRAM_MODEL) ?? file.model ?? DEFAULT_MODELS[provider],
    ...definedOnly({
      baseUrl: baseUrlFor(provider, env) ?? file.baseUrl,
      apiKey: apiKeyFor(provider, env) ?? file.apiKey,
      script: nonEmpty(env.OPENPROGRAM_SCRIPT) ?? file.script,
      scriptLog: nonEmpty(env.OPENPROGRAM_SCRIPT_LOG) ?? file.scriptLog,
      maxTokens: numberFrom(env, "OPENPROGRAM_MAX_TOKENS") ?? file.maxTokens,
      temperature: file.temperature,
      timeoutMs: file.timeoutMs,
      maxRetries: numberFrom(env, "OPENPROGRAM_MAX_RETRIES") ?? file.maxRetries,
    }),
  };
  return { config, origin, explicitlyNone: false };
}

/** `$OPENPROGRAM_HOME/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(openProgramHome(env), "config.json");
}

function readConfigFile(env: NodeJS.ProcessEnv): FileConfig {
  const path = configPath(env);
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ProviderConfigError(path, `${path} is not valid JSON (${(error as Error).message}); fix or remove it.`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ProviderConfigError(
      path,
      `${path} must hold a JSON object like {"provider": "openai", "model": "gpt-4o-mini"}.`,
    );
  }
  return parsed;
}

function baseUrlFor(provider: ProviderName, env: NodeJS.ProcessEnv): string | undefined {
  if (provider === "openai") return nonEmpty(env.OPENAI_BASE_URL);
  if (provider === "anthropic") return nonEmpty(env.ANTHROPIC_BASE_URL);
  return undefined;
}

function apiKeyFor(provider: ProviderName, env: NodeJS.ProcessEnv): string | undefined {
  if (provider === "openai") return nonEmpty(env.OPENAI_API_KEY);
  if (provider === "anthropic") return nonEmpty(env.ANTHROPIC_API_KEY);
  return undefined;
}

function numberFrom(env: NodeJS.ProcessEnv, variable: string): number | undefined {
  const text = nonEmpty(env[variable]);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new ProviderConfigError(variable, `${variable}=${text} must be a non-negative integer.`);
  return value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
}

function definedOnly<T extends Record<string, unknown>>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}
