// A session's recorded status is what its last writer said. A process killed mid-turn said `running` and never
// anything after, so every listing showed it running until `doctor --fix`. Listings judge such a session by its
// lease instead: held by a live process (or, in a cluster, by a replica: `heldElsewhere`), it runs; held by nobody,
// its turn was interrupted and can be resumed.
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionRecord } from "../store/types.js";

/** What a listing shows for a session recorded `running` whose turn nobody holds. */
export const INTERRUPTED_STATUS = "interrupted";

/** Options of `withLiveStatus`. */
export interface LiveStatusOptions {
  db?: SessionDB;
  /** True when the session's turn is held somewhere the lease files do not see (a cluster's PostgreSQL lease). */
  heldElsewhere?: (sessionId: string) => Promise<boolean>;
}

/**
 * The records with each `running` session judged by its lease: `interrupted` when no live process holds its turn
 * (the registry on disk is left as it is; the next turn, or `doctor --fix`, records the recovery).
 */
export async function withLiveStatus(
  records: readonly SessionRecord[],
  options: LiveStatusOptions = {},
): Promise<SessionRecord[]> {
  const internals = storeInternals(options.db ?? openStore());
  return Promise.all(
    records.map(async (record) => {
      if (record.status !== "running") return record;
      if (internals.liveTurnIds(record.id).length > 0) return record;
      if (options.heldElsewhere && (await options.heldElsewhere(record.id))) return record;
      return { ...record, status: INTERRUPTED_STATUS };
    }),
  );
}
