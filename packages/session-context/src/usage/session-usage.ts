import { clipLine } from "../messages/clip-text.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionNode } from "../store/types.js";
import { llmNodeUsage } from "./llm-usage.js";
import { resolvePriceTable, type PriceTable } from "./price-table.js";
import { addToModel, priceUsage, unpricedReasons, type PricedUsage } from "./priced-usage.js";
import { addCall, emptyCounts, type UsageCounts } from "./usage-counts.js";

/** One turn's usage: a chat message and its reply, or a program's top-level calls of one turn. */
export interface TurnUsage extends PricedUsage {
  /** The turn's id when its calls recorded one, else the id of the turn's first node. */
  turn: string;
  /** What started it: `chat: <message>` or `call <name>`. */
  label: string;
  /** Unix seconds of the turn's first node. */
  startedAt: number;
}

/** A session's token usage per turn and in total, priced where the price table allows. */
export interface SessionUsage {
  sessionId: string;
  total: PricedUsage;
  /** The turns that made model calls, oldest first. */
  turns: TurnUsage[];
  /** Why a cost is missing, one line per model without a price. */
  notes: string[];
}

/**
 * The usage of one session per turn and in total, from its nodes. A turn is
 * a top-level user message with what answered it, or the top-level calls a
 * program made under one `turn_id`; nested calls count in their top-level
 * call's turn.
 */
export async function describeSessionUsage(
  sessionId: string,
  options: { db?: SessionDB; prices?: PriceTable } = {},
): Promise<SessionUsage> {
  const db = options.db ?? openStore();
  return sessionUsageOf(
    sessionId,
    storeInternals(db).snapshotSync(sessionId).ordered,
    options.prices ?? resolvePriceTable(),
  );
}

/** The same from nodes already read (in seq order). */
export function sessionUsageOf(sessionId: string, ordered: readonly SessionNode[], table: PriceTable): SessionUsage {
  const turnOf = new Map<string, Turn>();
  const turns: Turn[] = [];
  const sessionModels = new Map<string, UsageCounts>();
  let current: Turn | null = null;
  for (const node of ordered) {
    let turn: Turn | undefined;
    if (node.caller === "" || !turnOf.has(node.caller)) {
      const turnId = typeof node.metadata.turn_id === "string" ? node.metadata.turn_id : null;
      const continues =
        current !== null &&
        ((node.role === "llm" && node.caller === "") ||
          (turnId !== null && current.turn === turnId) ||
          node.caller !== "");
      if (!continues || current === null) {
        current = { turn: turnId ?? node.id, label: labelOf(node), startedAt: node.created_at, byModel: new Map() };
        turns.push(current);
      }
      turn = current;
    } else {
      turn = turnOf.get(node.caller);
    }
    if (!turn) continue;
    turnOf.set(node.id, turn);
    const call = llmNodeUsage(node);
    if (!call) continue;
    const counts = addCall(emptyCounts(), call);
    addToModel(turn.byModel, call.model, counts);
    addToModel(sessionModels, call.model, counts);
  }
  const total = priceUsage(sessionModels, table);
  return {
    sessionId,
    total,
    turns: turns
      .filter((turn) => turn.byModel.size > 0)
      .map((turn) => ({
        turn: turn.turn,
        label: turn.label,
        startedAt: turn.startedAt,
        ...priceUsage(turn.byModel, table),
      })),
    notes: unpricedReasons(total.unpricedModels, table),
  };
}

interface Turn {
  turn: string;
  label: string;
  startedAt: number;
  byModel: Map<string, UsageCounts>;
}

function labelOf(node: SessionNode): string {
  if (node.role === "user") return `chat: ${clipLine(typeof node.output === "string" ? node.output : "", 60)}`;
  if (node.role === "code") return `call ${node.name}`;
  return `model ${node.name}`;
}
