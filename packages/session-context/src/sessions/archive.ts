import { openStore } from "../store/open-store.js";
import { storeInternals } from "../store/internal.js";
import type { SessionRecord } from "../store/types.js";
import type { StoreOption } from "./manage.js";

/**
 * Archives (or with `archived: false` unarchives) a session as Python's
 * `set_archived` does: `archived` in its index.json entry and in meta.json,
 * nothing else changed (`updated_at` stays, so the list keeps its order and
 * archiving is fully reversible). Listing hides archived sessions unless
 * asked; `pruneSessions` removes them after 90 days. Resolves to the entry.
 */
export async function archiveSession(
  sessionId: string,
  options: StoreOption & { archived?: boolean } = {},
): Promise<SessionRecord> {
  const db = options.db ?? openStore();
  const archived = options.archived !== false;
  const internals = storeInternals(db);
  await internals.withSessionLock(sessionId, () => internals.patchMetaLocked(sessionId, { archived }));
  const record = await db.updateSession(sessionId, { archived });
  await db.commitTurn(sessionId, archived ? "archive" : "unarchive");
  return record;
}

/** `archiveSession(sessionId, { archived: false })`. */
export async function unarchiveSession(sessionId: string, options: StoreOption = {}): Promise<SessionRecord> {
  return archiveSession(sessionId, { ...options, archived: false });
}
