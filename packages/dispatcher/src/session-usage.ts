import { PriceTableError, type Budgets, type SessionDB } from "@openprogram/session-context";
import { describeBudgets } from "@openprogram/session-context/budgets";
import {
  describeSessionUsage,
  resolvePriceTable,
  type PriceTable,
  type SessionUsage,
} from "@openprogram/session-context/usage";
import type { SessionBudgets } from "./protocol.js";

/**
 * A session's usage per turn and in total for the `session_detail` frame. A
 * price table the configuration gets wrong never hides the session: its
 * tokens are shown without costs, and a note says what to fix.
 */
export async function sessionUsageForPage(db: SessionDB, sessionId: string): Promise<SessionUsage> {
  const { prices, problem } = pagePrices();
  const usage = await describeSessionUsage(sessionId, { db, prices });
  return problem === null ? usage : { ...usage, notes: [problem] };
}

/** The dispatcher's budgets beside the session's spending, in the protocol's snake_case (the core computes them). */
export async function sessionBudgetsForPage(
  db: SessionDB,
  sessionId: string,
  budgets: Budgets,
): Promise<SessionBudgets> {
  const prices = budgets.prices ?? pagePrices().prices;
  const { standings, stoppedBy } = await describeBudgets(sessionId, { db, budgets, prices });
  return {
    standings: standings.map(({ stoppedTurn, ...standing }) => ({ ...standing, stopped_turn: stoppedTurn })),
    stopped_by: stoppedBy,
  };
}

/** The configured price table, or none with the problem that made it unreadable. */
function pagePrices(): { prices: PriceTable; problem: string | null } {
  try {
    return { prices: resolvePriceTable(), problem: null };
  } catch (error) {
    if (!(error instanceof PriceTableError)) throw error;
    return { prices: { prices: {}, source: "none", path: null }, problem: `costs are not shown: ${error.message}` };
  }
}
