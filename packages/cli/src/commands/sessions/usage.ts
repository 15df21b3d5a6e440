import { usageAcrossStore, type StoreUsage, type UsageGrouping } from "@openprogram/session-context/usage";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine, writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { formatTable } from "../../table.js";
import { budgetStandings, standingLines, type BudgetStanding } from "./usage-budgets.js";
import { USAGE_COLUMNS, usageCells } from "./usage-format.js";

/** Flags of `openprogram sessions usage`. */
export interface UsageFlags {
  since?: string;
  by?: UsageGrouping;
  json?: boolean;
}

/**
 * `openprogram sessions usage`: the store's token usage added up by model,
 * session or UTC day, with costs from the configured price table; a model
 * with no price shows its tokens, no cost, and a note saying why.
 */
export async function usageCommand(flags: UsageFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let usage: StoreUsage;
  let budgets: { path: string | null; standings: BudgetStanding[] };
  try {
    usage = await usageAcrossStore({
      by: flags.by ?? "model",
      ...(flags.since !== undefined ? { since: flags.since } : {}),
    });
    budgets = await budgetStandings(io.cwd, io.env);
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, budgets.standings.length > 0 ? { ...usage, budgets } : usage);
    return EXIT_CODES.ok;
  }
  const title = usage.by.toUpperCase();
  const rows = usage.rows.map((row) => [row.key, ...usageCells(row)]);
  rows.push(["total", ...usageCells(usage.total)]);
  writeText(io.stdout, formatTable([title, ...USAGE_COLUMNS], rows));
  const scope = usage.since ? `calls since ${usage.since} (UTC)` : "all calls";
  writeLine(
    io.stdout,
    `\n${scope} in ${usage.sessions} ${usage.sessions === 1 ? "session" : "sessions"}; ` +
      `prices: ${usage.prices.path ?? "none configured"}${usage.prices.path ? ` (${usage.prices.source})` : ""}`,
  );
  for (const note of usage.notes) writeLine(io.stdout, `note: ${note}`);
  for (const line of standingLines(budgets.standings, budgets.path)) writeLine(io.stdout, line);
  return EXIT_CODES.ok;
}
