import { clipLine } from "@openprogram/session-context/messages";
import {
  resolveRuntimeConfig,
  type ResolvedRuntimeConfig,
  type RuntimeConfig,
} from "@openprogram/session-context/runtime";
import { resolvePriceTable } from "@openprogram/session-context/usage";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { summarizeError, writeJson, writeLine, writeText } from "../output.js";
import { reportFailure } from "../report.js";
import { formatTable } from "../table.js";

/** Flags of `openprogram config`. */
export interface ConfigFlags {
  json?: boolean;
}

/** One resolved setting as printed: secrets masked. */
export interface ConfigSetting {
  /** A runtime setting, or "prices" (the price table `sessions usage` costs tokens with). */
  name: keyof RuntimeConfig | "prices";
  value: string;
  source: string;
}

/**
 * `openprogram config`: the model configuration every command would use from
 * here (environment, the project's openprogram.config.json, the user's
 * config.json) and where each value came from, and the price table. API keys are masked.
 * A request the project's file may not make is shown, then reported as the
 * error every command would stop with (exit 2).
 */
export async function configCommand(flags: ConfigFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  try {
    const resolved = resolveRuntimeConfig(io.env, io.cwd, { report: true });
    const settings: ConfigSetting[] = resolved.config
      ? (Object.entries(resolved.config) as Array<[keyof RuntimeConfig, unknown]>).map(([name, value]) => ({
          name,
          value: shown(name, value),
          source: resolved.sources[name] ?? "",
        }))
      : [{ name: "provider", value: "none", source: resolved.explicitlyNone ? resolved.origin : "nothing configured" }];
    const prices = resolvePriceTable(io.env, io.cwd);
    const models = Object.keys(prices.prices);
    settings.push({
      name: "prices",
      value:
        prices.source === "none"
          ? "none (costs are not shown)"
          : clipLine(`${models.length} ${models.length === 1 ? "model" : "models"}: ${models.join(", ")}`, 70),
      source: prices.source === "none" ? "nothing configured" : prices.source,
    });
    if (flags.json === true) {
      writeJson(io.stdout, {
        provider: resolved.config?.provider ?? null,
        settings,
        files: resolved.files,
        prices: { source: prices.source, path: prices.path, table: prices.prices },
        ...(resolved.refused ? { refused: summarizeError(resolved.refused) } : {}),
      });
      return resolved.refused ? EXIT_CODES.usage : EXIT_CODES.ok;
    }
    writeText(
      io.stdout,
      formatTable(
        ["setting", "value", "from"],
        settings.map((setting) => [setting.name, setting.value, setting.source]),
      ),
    );
    writeLine(io.stdout);
    writeLine(io.stdout, `project file: ${projectLine(resolved.files)}`);
    writeLine(io.stdout, `user file:    ${resolved.files.user}`);
    for (const skipped of resolved.files.skipped)
      writeLine(io.stdout, `passed over:  ${skipped.path} (${skipped.reason})`);
    if (!resolved.config && !resolved.explicitlyNone)
      writeLine(
        io.stdout,
        'No model is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY, or "provider" in openprogram.config.json.',
      );
    // Shown above as the file has it; every command that would use it stops with this error.
    if (resolved.refused) return reportFailure(context, resolved.refused, { json: false, during: "setup" });
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

/** The project file and whether it is trusted (`openprogram trust`). */
function projectLine(files: ResolvedRuntimeConfig["files"]): string {
  if (files.project === null) return "none (no usable openprogram.config.json from here up)";
  const trust =
    files.trust === "trusted"
      ? "trusted"
      : files.trust === "changed"
        ? "changed since you trusted it"
        : "not trusted: it cannot send your keys to another host";
  return `${files.project} (${trust})`;
}
