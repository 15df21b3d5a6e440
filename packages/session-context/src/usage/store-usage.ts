import { join } from "node:path";
import { InvalidInputError } from "../errors.js";
import { isValidSessionId } from "../ids.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import { readUsageCache, writeUsageCache, type CachedSessionUsage } from "../store/usage-cache.js";
import { historyFingerprint, readUsageTotal } from "../store/usage-total.js";
import { resolvePriceTable, type PriceTable } from "./price-table.js";
import { addToModel, priceUsage, unpricedReasons, type PricedUsage } from "./priced-usage.js";
import { usageBuckets, type UsageBucket } from "./usage-buckets.js";
import type { UsageCounts } from "./usage-counts.js";

/** How `usageAcrossStore` groups its rows. */
export type UsageGrouping = "model" | "session" | "day";

/** Options of `usageAcrossStore`. */
export interface StoreUsageOptions {
  /** The store (default: the one `openStore()` gives). */
  db?: SessionDB;
  /** Only calls on or after this UTC day: YYYY-MM-DD, or "<n>d" for the last n days (today included). */
  since?: string;
  /** Rows by model (default), session or UTC day. */
  by?: UsageGrouping;
  /** Prices (default: the configuration's, see `resolvePriceTable`). */
  prices?: PriceTable;
}

/** One row of `usageAcrossStore`: a model, a session or a day. */
export interface UsageRow extends PricedUsage {
  key: string;
}

/** The store's token usage added up, with costs where the price table has them. */
export interface StoreUsage {
  by: UsageGrouping;
  /** The first UTC day counted, or null for all. */
  since: string | null;
  rows: UsageRow[];
  total: PricedUsage;
  /** Sessions looked at, and how many of them had no current usage total and were added up from their nodes. */
  sessions: number;
  rebuilt: number;
  prices: { source: string; path: string | null };
  /** Why a cost is missing, one line per model without a price. */
  notes: string[];
}

/**
 * Adds up the token usage of every session in the store (archived ones
 * included) from each session's usage total (`usage.json`, kept at turn end),
 * reading a session's nodes only when its total is missing or older than its
 * history (a crash, a turn written by Python OpenProgram).
 */
export async function usageAcrossStore(options: StoreUsageOptions = {}): Promise<StoreUsage> {
  const db = options.db ?? openStore();
  const by = options.by ?? "model";
  if (!["model", "session", "day"].includes(by))
    throw new InvalidInputError(`Cannot group usage by ${JSON.stringify(by)}: use model, session or day.`);
  const since = options.since === undefined ? null : parseSince(options.since);
  const table = options.prices ?? resolvePriceTable();
  const sessions = await db.listSessions({ includeArchived: true });
  const { perSession, rebuilt } = await currentSessionBuckets(
    db,
    sessions.map((session) => session.id),
  );
  /** row key -> model -> counts */
  const groups = new Map<string, Map<string, UsageCounts>>();
  const allModels = new Map<string, UsageCounts>();
  for (const [sessionId, buckets] of perSession) {
    for (const bucket of buckets) {
      if (since !== null && bucket.day < since) continue;
      const key = by === "model" ? bucket.model : by === "day" ? bucket.day : sessionId;
      let group = groups.get(key);
      if (!group) groups.set(key, (group = new Map<string, UsageCounts>()));
      addToModel(group, bucket.model, bucket);
      addToModel(allModels, bucket.model, bucket);
    }
  }
  const rows = [...groups].map(([key, byModel]) => ({ key, ...priceUsage(byModel, table) }));
  rows.sort(
    by === "day" ? (a, b) => (a.key < b.key ? -1 : 1) : (a, b) => tokens(b) - tokens(a) || (a.key < b.key ? -1 : 1),
  );
  const total = priceUsage(allModels, table);
  return {
    by,
    since,
    rows,
    total,
    sessions: sessions.length,
    rebuilt,
    prices: { source: table.source, path: table.path },
    notes: unpricedReasons(total.unpricedModels, table),
  };
}

/**
 * Each session's usage buckets, current: from the store's usage cache when
 * the session's history/ is as the cache saw it, else from the usage.json its
 * last turn end kept when that is current, else from its nodes (counted in
 * `rebuilt`). The cache is written back when anything in it changed.
 */
async function currentSessionBuckets(
  db: SessionDB,
  sessionIds: readonly string[],
): Promise<{ perSession: Map<string, UsageBucket[]>; rebuilt: number }> {
  const internals = storeInternals(db);
  const cache = readUsageCache(db.root);
  const next = new Map<string, CachedSessionUsage>();
  const perSession = new Map<string, UsageBucket[]>();
  let rebuilt = 0;
  let changed = false;
  for (const sessionId of sessionIds) {
    if (!isValidSessionId(sessionId)) continue; // a hand-edited registry entry names no session folder
    const dir = join(db.root, sessionId);
    const fingerprint = historyFingerprint(dir);
    let entry = cache.get(sessionId);
    if (entry?.fingerprint !== fingerprint) {
      changed = true;
      let buckets = readUsageTotal(dir, fingerprint);
      if (buckets === null) {
        if (!internals.exists(sessionId)) continue; // listed, but deleted meanwhile
        rebuilt += 1;
        buckets = usageBuckets(internals.readHistorySync(sessionId).nodes);
      }
      entry = { fingerprint, buckets };
    }
    next.set(sessionId, entry);
    perSession.set(sessionId, entry.buckets);
  }
  if (changed || next.size !== cache.size) {
    // A store we cannot write to still answers; the cache is only saved time.
    await writeUsageCache(db.root, next).catch(() => undefined);
  }
  return { perSession, rebuilt };
}

function tokens(row: UsageCounts): number {
  return row.inputTokens + row.outputTokens;
}

/** "YYYY-MM-DD" as it is; "<n>d" as the UTC day n-1 days before today. */
function parseSince(text: string): string {
  const value = text.trim();
  const days = /^(\d{1,5})d$/.exec(value);
  if (days && Number(days[1]) >= 1)
    return new Date(Date.now() - (Number(days[1]) - 1) * 86_400_000).toISOString().slice(0, 10);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))) return value;
  throw new InvalidInputError(
    `--since ${JSON.stringify(text)} is not a date: give a UTC day as YYYY-MM-DD (e.g. 2026-12-01) or a number of days like 7d.`,
  );
}
