import { isValidSessionId } from "../ids.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionNode } from "../store/types.js";

/**
 * The wall time a session's turns ran, from its record: the `duration_seconds` of its top-level calls and model
 * replies (a call's includes everything nested in it; idle time between turns is not in any).
 */
export function recordedSeconds(ordered: readonly SessionNode[]): number {
  let seconds = 0;
  for (const node of ordered) seconds += topLevelSeconds(node);
  return seconds;
}

function topLevelSeconds(node: SessionNode): number {
  if (node.caller !== "" || (node.role !== "code" && node.role !== "llm")) return 0;
  const duration = node.metadata.duration_seconds;
  return typeof duration === "number" && Number.isFinite(duration) && duration > 0 ? duration : 0;
}

/** The wall time the store's sessions ran, per session and per UTC day (of each top-level call's start). */
export interface StoreWallTime {
  bySession: Map<string, number>;
  byDay: Map<string, number>;
}

/**
 * The wall time every session in the store (archived ones included) ran, read from the nodes: what wall-time
 * budgets are checked against (`openprogram sessions usage`). Reads every session's history.
 */
export async function wallTimeAcrossStore(options: { db?: SessionDB } = {}): Promise<StoreWallTime> {
  const db = options.db ?? openStore();
  const internals = storeInternals(db);
  const bySession = new Map<string, number>();
  const byDay = new Map<string, number>();
  for (const session of await db.listSessions({ includeArchived: true })) {
    if (!isValidSessionId(session.id) || !internals.exists(session.id)) continue;
    let total = 0;
    for (const node of internals.readHistorySync(session.id).nodes) {
      const seconds = topLevelSeconds(node);
      if (seconds === 0) continue;
      total += seconds;
      const day = new Date(node.created_at * 1000).toISOString().slice(0, 10);
      byDay.set(day, (byDay.get(day) ?? 0) + seconds);
    }
    bySession.set(session.id, total);
  }
  return { bySession, byDay };
}
