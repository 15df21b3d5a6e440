// The core's one internal door to a store. A SessionDB's public surface is async, with one way to do each thing;
// the core's own modules (the session context, prompt rendering, turns, the doctor) also need synchronous readers on
// their hot paths, the session lock and the registry for repairs. They get them here, as `storeInternals(db)`, and
// only here: the package entry does not export this module, and lint (eslint.config.js, "the store's internal door")
// refuses an import of it from any file outside packages/session-context/src and the core's own tests, and an import
// of registerStoreInternals from anything but session-db.ts. A WeakMap keyed by the store keeps these methods off the
// SessionDB object itself, so an adapter holding a SessionDB sees only its public surface.
import { InvalidInputError } from "../errors.js";
import type { SessionPaths } from "./layout.js";
import type { NodeWrite, SessionHistory, SessionMeta, SessionNode, SessionRecord } from "./types.js";

/**
 * What the core's own modules (the session context, prompt rendering, turns,
 * the doctor) need of a store beyond its public, async surface: synchronous
 * readers for the hot paths, the session lock and the registry for repairs.
 * Reached through `storeInternals(db)` (at the end of this file).
 */
export interface StoreInternals {
  /** Paths of a session (validates the id first). */
  paths(sessionId: string): SessionPaths;
  /** True when the session has a meta.json. Cheap: one stat. */
  exists(sessionId: string): boolean;
  /** `meta.json`; CorruptMetaError when it is not a JSON object, SessionNotFoundError when missing. */
  readMetaSync(sessionId: string): SessionMeta;
  /** Nodes in seq order plus every node file that could not be read. */
  readHistorySync(sessionId: string): SessionHistory;
  /** A fresh, shared, read-only view of the nodes (by id and in seq order), without copying. */
  snapshotSync(sessionId: string): { byId: ReadonlyMap<string, SessionNode>; ordered: readonly SessionNode[] };
  /** Fresh id -> node map (shared, read-only). */
  nodeMapSync(sessionId: string): ReadonlyMap<string, SessionNode>;
  /** Ids of the session's turns whose processes are alive (by their turn leases). */
  liveTurnIds(sessionId: string): string[];
  /**
   * Whether entering the session for a turn should run `recover`: the first
   * time this instance enters it, and again whenever a lease file is there to
   * be judged (a turn of another process may have died since). Synchronous, so
   * the hot path of entering a checked session awaits nothing more.
   */
  needsRecoveryCheck(sessionId: string): boolean;
  /**
   * Appends and updates several nodes as one write (one lock section, one log append, one fdatasync unless every
   * write defers it); only the first may move the head. Resolves to the nodes as written.
   */
  writeNodes(sessionId: string, writes: readonly NodeWrite[]): Promise<SessionNode[]>;
  /** Merges top-level fields into meta.json under the session lock (compaction's `_last_summary_*`). */
  writeMetaFields(sessionId: string, fields: Record<string, unknown>): Promise<void>;
  /** Bytes of node files the store's cached session views hold (bounded by MAX_CACHED_HISTORY_BYTES; for tests). */
  cachedHistoryBytes(): number;
  /** Drops the cached view of a session (after repairs made behind the store's back). */
  invalidate(sessionId: string): void;
  /** Runs a section under the session's store lock: no other writer in any process runs meanwhile. */
  withSessionLock<T>(sessionId: string, section: () => Promise<T>): Promise<T>;
  /** Writes the registry's queued changes now, synchronously (before a test removes the store, say). */
  flushRegistrySync(): void;
  /** Merges fields into meta.json (branch names, the head, `archived`); call under the session lock. */
  patchMetaLocked(sessionId: string, patch: Partial<SessionMeta>): Promise<void>;
  /** Reads and changes the registry under its lock (for repairs). */
  updateRegistry(mutate: (entries: Record<string, SessionRecord>) => void): Promise<Record<string, SessionRecord>>;
}

/** A store as this module knows it (a SessionDB; named structurally so the store's modules import no cycle). */
interface StoreKey {
  readonly root: string;
}

const internalsByStore = new WeakMap<StoreKey, StoreInternals>();

/** Called once by each SessionDB's constructor (and by nothing else: lint keeps it so). */
export function registerStoreInternals(db: StoreKey, internals: StoreInternals): void {
  internalsByStore.set(db, internals);
}

/** The core-only side of a store (see StoreInternals). */
export function storeInternals(db: StoreKey): StoreInternals {
  const internals = internalsByStore.get(db);
  if (!internals)
    throw new InvalidInputError(
      "storeInternals: this store was not made by this copy of @openprogram/session-context; install one copy of it.",
    );
  return internals;
}
