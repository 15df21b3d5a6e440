import type { BudgetLimit } from "@openprogram/session-context";
import { resolveBudgetConfig } from "@openprogram/session-context/budgets";
import { usageAcrossStore, wallTimeAcrossStore, type UsageRow } from "@openprogram/session-context/usage";

/** One configured budget beside what was spent against it. */
export interface BudgetStanding {
  /** "session" (each session over its life) or "program" (all programs, per UTC day: the store keeps no program per day). */
  scope: "session" | "day";
  /** `seconds`: the time the session's turns ran (or, per day, every session's turns that day). */
  dimension: "tokens" | "cost" | "seconds";
  limit: number;
  /** The session or day that spent the most, and how much. */
  most: { key: string; spent: number } | null;
  /** How many sessions (or days) are at or over the limit. */
  atOrOver: number;
}

/** The budgets configured (`"budgets"` in openprogram.config.json) beside what the store spent against them. */
export async function budgetStandings(
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{
  path: string | null;
  standings: BudgetStanding[];
}> {
  const { budgets, path } = resolveBudgetConfig(env, cwd);
  const standings: BudgetStanding[] = [];
  let wallTime: Awaited<ReturnType<typeof wallTimeAcrossStore>> | null = null;
  const against = async (scope: "session" | "day", limits: BudgetLimit | undefined) => {
    if (!limits) return;
    if (limits.tokens !== undefined || limits.cost !== undefined) {
      const usage = await usageAcrossStore({ by: scope });
      for (const dimension of ["tokens", "cost"] as const) {
        const limit = limits[dimension];
        if (limit !== undefined) standings.push(standing(scope, dimension, limit, usage.rows.map(spentOf(dimension))));
      }
    }
    if (limits.seconds !== undefined) {
      wallTime ??= await wallTimeAcrossStore();
      const spent = scope === "session" ? wallTime.bySession : wallTime.byDay;
      standings.push(
        standing(
          scope,
          "seconds",
          limits.seconds,
          [...spent].map(([key, seconds]) => ({ key, spent: seconds })),
        ),
      );
    }
  };
  await against("session", budgets.session);
  await against("day", budgets.program);
  return { path, standings };
}

/** What a usage row spent on one dimension. */
function spentOf(dimension: "tokens" | "cost"): (row: UsageRow) => { key: string; spent: number } {
  return (row) => ({
    key: row.key,
    spent: dimension === "tokens" ? row.inputTokens + row.outputTokens : (row.cost ?? 0),
  });
}

function standing(
  scope: "session" | "day",
  dimension: BudgetStanding["dimension"],
  limit: number,
  rows: readonly { key: string; spent: number }[],
): BudgetStanding {
  let most: BudgetStanding["most"] = null;
  let atOrOver = 0;
  for (const { key, spent } of rows) {
    if (spent >= limit) atOrOver++;
    if (most === null || spent > most.spent) most = { key, spent };
  }
  return { scope, dimension, limit, most, atOrOver };
}

/** One line per standing, for the text output. */
export function standingLines(standings: readonly BudgetStanding[], path: string | null): string[] {
  return standings.map((entry) => {
    const amount = (value: number) =>
      entry.dimension === "cost"
        ? `$${Number(value.toFixed(6))}`
        : entry.dimension === "seconds"
          ? `${Number(value.toFixed(3))} s`
          : `${value} tokens`;
    const what = entry.scope === "session" ? "session" : "program day (UTC, all programs)";
    const most = entry.most
      ? `; the most: ${entry.most.key}, ${amount(entry.most.spent)} (${Math.round((100 * entry.most.spent) / (entry.limit || 1))}%)`
      : "";
    return `budget: ${what} ${entry.dimension} ${amount(entry.limit)} (${path ?? "configuration"}): ${entry.atOrOver} at or over it${most}`;
  });
}
