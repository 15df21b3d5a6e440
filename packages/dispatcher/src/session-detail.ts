import type { Budgets, SessionDB, SessionNode } from "@openprogram/session-context";
import { describeSession, withLiveStatus } from "@openprogram/session-context/store";
import type { SessionDetailFrame, SessionDetailPage } from "./protocol.js";
import { sessionBudgetsForPage, sessionUsageForPage } from "./session-usage.js";
import { latestTurn, resumableInfo } from "./stopped-turns.js";

/** Nodes a `session_detail` carries unless the request asks for fewer. */
export const DEFAULT_DETAIL_NODES = 1_000;
/** The most nodes one `session_detail` carries. */
export const MAX_DETAIL_NODES = 5_000;
/**
 * Bytes of nodes (as JSON) one `session_detail` carries at most: the page stops before the node that would pass it
 * (but always holds one). A big session is read page by page, newest first, never as one huge frame.
 */
export const MAX_DETAIL_BYTES = 4 * 1024 * 1024;

/** Which page: the newest nodes, or those before `beforeSeq`; at most `limit`. */
export interface DetailPageRequest {
  limit?: number;
  beforeSeq?: number;
}

/**
 * One page of the session as `session_detail` carries it: the answer to
 * `get_session`, and the snapshot a resync sends to subscribers that may have
 * missed frames (its newest page). `busy`: a turn of it runs here or on
 * another replica. With `budgets` (the dispatcher's), each stands beside the
 * session's spending.
 */
export async function sessionDetailFrame(
  db: SessionDB,
  sessionId: string,
  busy: boolean,
  request: DetailPageRequest = {},
  budgets: Budgets | null = null,
): Promise<SessionDetailFrame> {
  const detail = await describeSession(sessionId, { db });
  // Judged by its lease, as the list is: `running` with nobody holding it is interrupted.
  const [record] = await withLiveStatus([detail.record], { db, heldElsewhere: async () => busy });
  const { nodes, page } = pageOf(detail.nodes, request);
  const firstSeq = page.first_seq ?? Number.POSITIVE_INFINITY;
  const beforeSeq = request.beforeSeq ?? Number.POSITIVE_INFINITY;
  return {
    type: "session_detail",
    session_id: sessionId,
    session: record ?? detail.record,
    meta: detail.meta,
    conversation: detail.conversation.filter((node) => node.seq >= firstSeq && node.seq < beforeSeq),
    nodes,
    problems: detail.problems,
    busy,
    resumable: busy ? null : resumableInfo(latestTurn(db, sessionId)),
    usage: await sessionUsageForPage(db, sessionId),
    page,
    ...(budgets ? { budgets: await sessionBudgetsForPage(db, sessionId, budgets) } : {}),
  };
}

/** The newest nodes before `beforeSeq`, within the count and byte limits, in seq order. */
export function pageOf(
  all: readonly SessionNode[],
  request: DetailPageRequest,
): { nodes: SessionNode[]; page: SessionDetailPage } {
  const limit = Math.min(request.limit ?? DEFAULT_DETAIL_NODES, MAX_DETAIL_NODES);
  const beforeSeq = request.beforeSeq ?? Number.POSITIVE_INFINITY;
  const sorted = all.every((node, index) => index === 0 || (all[index - 1] as SessionNode).seq <= node.seq)
    ? all
    : [...all].sort((a, b) => a.seq - b.seq);
  let end = sorted.length;
  while (end > 0 && (sorted[end - 1] as SessionNode).seq >= beforeSeq) end--;
  let start = end;
  let bytes = 0;
  while (start > 0 && end - start < limit) {
    const size = Buffer.byteLength(JSON.stringify(sorted[start - 1]));
    if (end - start > 0 && bytes + size > MAX_DETAIL_BYTES) break;
    bytes += size;
    start--;
  }
  const nodes = sorted.slice(start, end);
  return {
    nodes,
    page: {
      total_nodes: sorted.length,
      before_seq: request.beforeSeq ?? null,
      first_seq: nodes[0]?.seq ?? null,
      has_more: start > 0,
    },
  };
}
