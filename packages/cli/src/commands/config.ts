import { resolveRuntimeConfig, type RuntimeConfig } from "@openprogram/session-context";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { writeJson, writeLine } from "../output.js";
import { reportFailure } from "../report.js";
import { formatTable } from "../table.js";

/** Flags of `openprogram config`. */
export interface ConfigFlags {
  json?: boolean;
}

/** One resolved setting as printed: secrets masked. */
export interface ConfigSetting {
  name: keyof RuntimeConfig;
  value: string;
  source: string;
}

/**
 * `openprogram config`: the model configuration every command would use from
 * here (environment, the project's openprogram.config.json, the user's
 * config.json) and where each value came from. API keys are masked.
 */
export async function configCommand(flags: ConfigFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  try {
    const resolved = resolveRuntimeConfig(io.env, io.cwd);
    const settings: ConfigSetting[] = resolved.config
      ? (Object.entries(resolved.config) as Array<[keyof RuntimeConfig, unknown]>).map(([name, value]) => ({
          name,
          value: shown(name, value),
          source: resolved.sources[name] ?? "",
        }))
      : [{ name: "provider", value: "none", source: resolved.explicitlyNone ? resolved.origin : "nothing configured" }];
    if (flags.json === true) {
      writeJson(io.stdout, { provider: resolved.config?.provider ?? null, settings, files: resolved.files });
      return EXIT_CODES.ok;
    }
    io.stdout.write(
      formatTable(
        ["setting", "value", "from"],
        settings.map((setting) => [setting.name, setting.value, setting.source]),
      ),
    );
    writeLine(io.stdout);
    writeLine(io.stdout, `project file: ${resolved.files.project ?? "none (no openprogram.config.json from here up)"}`);
    writeLine(io.stdout, `user file:    ${resolved.files.user}`);
    if (!resolved.config && !resolved.explicitlyNone)
      writeLine(
        io.stdout,
        'No model is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY, or "provider" in openprogram.config.json.',
      );
    return EXIT_CODES.ok;
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
}

/** A value as printed: keys masked to their last four characters, inline replies counted. */
function shown(name: keyof RuntimeConfig, value: unknown): string {
  if (name === "apiKey" && typeof value === "string")
    return value.length >= 12 ? `****${value.slice(-4)} (masked)` : "**** (masked)";
  if (Array.isArray(value)) return `${value.length} replies, inline`;
  return String(value);
}
