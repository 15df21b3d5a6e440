import { readdirSync } from "node:fs";
import { join } from "node:path";
import { isValidSessionId } from "../ids.js";
import { SessionBusyError } from "../errors.js";
import { nowSeconds } from "../time/now-seconds.js";
import { openStore } from "../store/open-store.js";
import { storeInternals, type StoreInternals } from "../store/internal.js";
import type { SessionRecord } from "../store/types.js";
import type { StoreOption } from "./manage.js";

/** The figures of the cleanup rules. */
export interface PruneRules {
  /** A session with no history files created longer ago than this (seconds) is an empty shell. */
  emptyAfterSeconds: number;
  /** An archived session not updated for this long (seconds) has expired. */
  archivedExpireSeconds: number;
  /** Past this many sessions, the oldest archived ones go. */
  capacity: number;
}

/** Python OpenProgram's startup cleanup rules (PYTHON-COMPAT.md, Archive and cleanup). */
export const PRUNE_RULES: Readonly<PruneRules> = {
  /** A session with no history files created longer ago than this (seconds) is an empty shell. */
  emptyAfterSeconds: 3600,
  /** An archived session not updated for this long (seconds) has expired. */
  archivedExpireSeconds: 90 * 86_400,
  /** Past this many sessions, the oldest archived ones go. */
  capacity: 1000,
};

/** Why a session is pruned: Python's three rules. */
export type PruneReason = "empty" | "archive_expired" | "over_capacity";

/** Why a session the rules name is kept: a turn runs in it, or a question in it waits for an answer. */
export type PruneKeptReason = "running" | "waiting";

/** One session the rules name. */
export interface PruneEntry {
  sessionId: string;
  reason: PruneReason;
  title: string;
  archived: boolean;
  createdAt: number;
  updatedAt: number;
}

/** What `pruneSessions` did (or, with `dryRun`, would do). */
export interface PruneReport {
  root: string;
  dryRun: boolean;
  /** Sessions in the registry. */
  checked: number;
  /** Removed (with `dryRun`: would be removed), in the order the rules name them. */
  removed: PruneEntry[];
  /** Named by a rule but kept, because a turn runs in them or a question waits. */
  kept: Array<PruneEntry & { keptBecause: PruneKeptReason }>;
}

/** Options of `pruneSessions`. */
export interface PruneOptions extends StoreOption {
  /** List what would go; delete nothing. */
  dryRun?: boolean;
  /** The time the ages are measured at (seconds); default now. */
  now?: number;
  /** Override a rule's figure (tests; a store of your own). */
  rules?: Partial<PruneRules>;
}

/**
 * Applies Python OpenProgram's startup cleanup on demand: deletes sessions
 * with no history files created over an hour ago, archived sessions not
 * updated for 90 days, and, when more than 1,000 sessions remain, the oldest
 * archived ones (by `updated_at`) beyond that number. Never a session running
 * a turn in any process (its turn lease, as `deleteSession` checks under the
 * session lock) nor one waiting for an answer (`needs_input`): those are
 * reported as kept. Reads only the registry and, for sessions old enough to
 * be empty shells, one directory entry of `history/`.
 */
export async function pruneSessions(options: PruneOptions = {}): Promise<PruneReport> {
  const db = options.db ?? openStore();
  const internals = storeInternals(db);
  const rules = { ...PRUNE_RULES, ...options.rules };
  const now = options.now ?? nowSeconds();
  const dryRun = options.dryRun === true;
  const records = await db.listSessions({ includeArchived: true });
  const report: PruneReport = { root: db.root, dryRun, checked: records.length, removed: [], kept: [] };
  const gone = new Set<string>();

  const settle = async (record: SessionRecord, reason: PruneReason): Promise<boolean> => {
    const entry = pruneEntry(record, reason);
    const busy = keptBecause(internals, db.root, record);
    if (busy) {
      report.kept.push({ ...entry, keptBecause: busy });
      return false;
    }
    if (!dryRun) {
      try {
        await db.deleteSession(record.id);
      } catch (error) {
        // A turn began between the check and the delete: the session lock decided, and the session stays.
        if (!(error instanceof SessionBusyError)) throw error;
        report.kept.push({ ...entry, keptBecause: "running" });
        return false;
      }
    }
    report.removed.push(entry);
    gone.add(record.id);
    return true;
  };

  // Registry order (oldest first), as Python walks its index: the report reads in a stable order.
  const byAge = [...records].sort((a, b) => (a.created_at ?? 0) - (b.created_at ?? 0) || a.id.localeCompare(b.id));
  for (const record of byAge) {
    const created = record.created_at || 0;
    const updated = record.updated_at || created;
    if (now - created > rules.emptyAfterSeconds && !hasHistoryFiles(db.root, record.id)) {
      await settle(record, "empty");
      continue;
    }
    if (record.archived && now - updated > rules.archivedExpireSeconds) await settle(record, "archive_expired");
  }
  const remaining = records.length - gone.size;
  if (remaining > rules.capacity) {
    let excess = remaining - rules.capacity;
    const archived = records
      .filter((record) => record.archived && !gone.has(record.id))
      .sort((a, b) => (a.updated_at || 0) - (b.updated_at || 0));
    for (const record of archived) {
      if (excess === 0) break;
      if (await settle(record, "over_capacity")) excess--;
    }
  }
  return report;
}

function pruneEntry(record: SessionRecord, reason: PruneReason): PruneEntry {
  return {
    sessionId: record.id,
    reason,
    title: record.title ?? "",
    archived: record.archived === true,
    createdAt: record.created_at,
    updatedAt: record.updated_at,
  };
}

/**
 * A session the rules must leave alone: a live turn lease (in any process:
 * the lease files are judged by the store, as recovery and deleteSession judge
 * them), or a question waiting for its answer. Most sessions have no lease
 * file at all: one directory read says so.
 */
function keptBecause(internals: StoreInternals, root: string, record: SessionRecord): PruneKeptReason | null {
  if (hasLeaseFiles(root, record.id) && internals.exists(record.id) && internals.liveTurnIds(record.id).length > 0)
    return "running";
  if (record.status === "needs_input") return "waiting";
  return null;
}

function hasLeaseFiles(root: string, sessionId: string): boolean {
  if (!isValidSessionId(sessionId)) return false;
  try {
    return readdirSync(join(root, sessionId, ".state", "turns")).some((name) => name.endsWith(".lease"));
  } catch {
    return false;
  }
}

/**
 * Python's test: `history/` exists and has an entry. The one question asked
 * of every session, so nothing else is built per session (an id the registry
 * holds that is not a valid id names no folder we would read). readdirSync
 * measured four times faster than opendir for the small folders sessions have.
 */
function hasHistoryFiles(root: string, sessionId: string): boolean {
  if (!isValidSessionId(sessionId)) return false;
  try {
    return readdirSync(join(root, sessionId, "history")).length > 0;
  } catch {
    return false;
  }
}
