import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionNode } from "../store/types.js";
import { resolvePriceTable, type PriceTable } from "../usage/price-table.js";
import { sessionUsageOf } from "../usage/session-usage.js";
import { budgetOfMessage } from "./budget-errors.js";
import type { BudgetDimension, BudgetLimit, Budgets, BudgetScope } from "./budget-types.js";
import { programKeyOf, programLedgerOf } from "./turn-budget.js";

/** One configured budget beside what was spent against it (one bar on the page). */
export interface BudgetStanding {
  scope: BudgetScope;
  dimension: BudgetDimension;
  limit: number;
  /**
   * Spent against it: the session's latest turn (turn), the session over its life (session), the program's day in
   * the ledger (program). Null for exec (each exec counts on its own, and nothing is kept after it) and for a
   * program ledger that cannot say.
   */
  spent: number | null;
  /** What `spent` covers, in words ("the latest turn", "this session", "program p on 2026-12-04 (UTC)", ...). */
  over: string;
  /** This budget stopped the session's latest turn. */
  stoppedTurn: boolean;
}

/** A session's budgets and standing, and the budget that stopped its latest turn (null: none did). */
export interface BudgetStandings {
  sessionId: string;
  standings: BudgetStanding[];
  stoppedBy: { scope: BudgetScope; dimension: BudgetDimension; message: string } | null;
}

const DIMENSIONS: readonly BudgetDimension[] = ["tokens", "cost", "seconds"];

/**
 * Each limit of `budgets` (exec, turn, session, program; tokens, cost, wall time) beside what the session spent
 * against it, as the dispatcher's page shows them: the turn scope counts the session's latest turn, the session
 * scope its whole record (as a session budget seeds itself), the program scope today's spending in the ledger
 * program budgets are kept in (this process's, or the cluster's). Also which budget stopped the latest turn,
 * read from the error it recorded.
 */
export async function describeBudgets(
  sessionId: string,
  options: { db: SessionDB; budgets: Budgets; prices?: PriceTable; now?: Date },
): Promise<BudgetStandings> {
  const { db, budgets } = options;
  const ordered = storeInternals(db).snapshotSync(sessionId).ordered;
  const prices = options.prices ?? budgets.prices ?? resolvePriceTable();
  const usage = sessionUsageOf(sessionId, ordered, prices);
  const latest = latestTurnOf(ordered);
  const turnUsage = latest ? usage.turns.find((turn) => turn.turn === latest.key) : undefined;
  const stop = latest ? budgetStopOf(latest.nodes) : null;
  const standings: BudgetStanding[] = [];
  const add = (
    scope: BudgetScope,
    limits: BudgetLimit | undefined,
    spentOf: (d: BudgetDimension) => number | null,
    over: string,
  ) => {
    for (const dimension of DIMENSIONS) {
      const limit = limits?.[dimension];
      if (limit === undefined) continue;
      const stoppedTurn = stop !== null && stop.scope === scope && stop.dimension === dimension;
      standings.push({ scope, dimension, limit, spent: spentOf(dimension), over, stoppedTurn });
    }
  };
  add("exec", budgets.exec, () => null, "each call to exec, its tool loop included");
  add(
    "turn",
    budgets.turn,
    (dimension) =>
      dimension === "tokens"
        ? (turnUsage?.inputTokens ?? 0) + (turnUsage?.outputTokens ?? 0)
        : dimension === "cost"
          ? (turnUsage?.cost ?? 0)
          : latest
            ? secondsOf(latest.nodes)
            : 0,
    "the latest turn",
  );
  add(
    "session",
    budgets.session,
    (dimension) =>
      dimension === "tokens" ? usage.total.inputTokens + usage.total.outputTokens : (usage.total.cost ?? 0),
    "this session",
  );
  if (budgets.program) {
    const ref = latest ? programRefOf(latest.nodes) : null;
    const key = programKeyOf(budgets.program, ref, options.now ?? new Date());
    const ledger = programLedgerOf(budgets);
    const spent = ledger.spent ? ((await ledger.spent(key)) ?? { tokens: 0, cost: 0 }) : null;
    const [, name, day] = /^program:(.*):([^:]+)$/.exec(key) ?? [];
    add(
      "program",
      budgets.program,
      (dimension) => (spent === null || dimension === "seconds" ? null : spent[dimension]),
      `program ${name} on ${day} (${budgets.program.timeZone ?? "UTC"})`,
    );
  }
  return { sessionId, standings, stoppedBy: stop };
}

/** The session's latest turn: grouped as describeSessionUsage groups them (so its key is that turn's `turn`). */
function latestTurnOf(ordered: readonly SessionNode[]): { key: string; nodes: SessionNode[] } | null {
  const turnOf = new Map<string, string>();
  let current: { key: string; nodes: SessionNode[] } | null = null;
  for (const node of ordered) {
    const nestedIn = node.caller !== "" ? turnOf.get(node.caller) : undefined;
    if (nestedIn !== undefined) {
      turnOf.set(node.id, nestedIn);
      if (current?.key === nestedIn) current.nodes.push(node);
      continue;
    }
    const turnId = typeof node.metadata.turn_id === "string" ? node.metadata.turn_id : null;
    const continues =
      current !== null &&
      ((node.role === "llm" && node.caller === "") ||
        (turnId !== null && current.key === turnId) ||
        node.caller !== "");
    if (!continues || current === null) current = { key: turnId ?? node.id, nodes: [] };
    current.nodes.push(node);
    turnOf.set(node.id, current.key);
  }
  return current;
}

/** The budget whose BudgetExceededError the turn's nodes recorded last, or null. */
function budgetStopOf(nodes: readonly SessionNode[]): BudgetStandings["stoppedBy"] {
  for (let index = nodes.length - 1; index >= 0; index--) {
    // A failed call records its error; a reply that took a budget past its limit notes it (`stopped_by_budget`).
    const { error: failed, stopped_by_budget: crossed } = (nodes[index] as SessionNode).metadata;
    const error = (crossed ?? failed) as { code?: unknown; message?: unknown } | undefined;
    if (error?.code !== "budget_exceeded" || typeof error.message !== "string") continue;
    const budget = budgetOfMessage(error.message);
    if (budget) return { ...budget, message: error.message };
  }
  return null;
}

/** Wall time from the turn's first node to the last end any of its nodes recorded. */
function secondsOf(nodes: readonly SessionNode[]): number {
  const first = nodes[0];
  if (!first) return 0;
  let end = first.created_at;
  for (const node of nodes) {
    const { duration_seconds: duration, finished_at: finished } = node.metadata;
    end = Math.max(end, node.created_at);
    if (typeof duration === "number") end = Math.max(end, node.created_at + duration);
    if (typeof finished === "number") end = Math.max(end, finished);
  }
  return end - first.created_at;
}

/** The program the turn ran, as its first top-level call recorded it for resuming. */
function programRefOf(nodes: readonly SessionNode[]): string | null {
  for (const node of nodes) {
    const resumable = node.metadata.resumable as { program?: unknown } | undefined;
    if (typeof resumable?.program === "string") return resumable.program;
  }
  return null;
}
