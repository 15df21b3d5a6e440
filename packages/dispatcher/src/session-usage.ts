import {
  describeSessionUsage,
  PriceTableError,
  resolvePriceTable,
  type PriceTable,
  type SessionDB,
  type SessionUsage,
} from "@openprogram/session-context";

/**
 * A session's usage per turn and in total for the `session_detail` frame. A
 * price table the configuration gets wrong never hides the session: its
 * tokens are shown without costs, and a note says what to fix.
 */
export async function sessionUsageForPage(db: SessionDB, sessionId: string): Promise<SessionUsage> {
  let prices: PriceTable;
  let problem: string | null = null;
  try {
    prices = resolvePriceTable();
  } catch (error) {
    if (!(error instanceof PriceTableError)) throw error;
    prices = { prices: {}, source: "none", path: null };
    problem = `costs are not shown: ${error.message}`;
  }
  const usage = await describeSessionUsage(sessionId, { db, prices });
  return problem === null ? usage : { ...usage, notes: [problem] };
}
