import { existsSync, mkdirSync } from "node:fs";
import { basename, resolve } from "node:path";
import { CorruptMetaError, SessionNotFoundError, StoreWriteError } from "../errors.js";
import { dumpsPython } from "../json/python-json.js";
import { DIR_MODE, type FileWrite } from "./atomic-file.js";
import { HistoryFiles } from "./history.js";
import { SessionPaths } from "./layout.js";
import { withLeasedLock } from "./lease-lock.js";
import { SESSION_LOCK } from "./session-lock.js";
import { readMetaFile } from "./meta-file.js";
import { MetaStamps } from "./meta-stamp.js";
import { registryEntryFromMeta, SessionRegistry } from "./registry.js";
import { assertSafeToWrite } from "./safe-paths.js";
import { forgetSpareStock } from "./spare-files.js";
import type { SessionMeta, SessionRecord } from "./types.js";

/** Past this many sessions a per-session memory starts over: each only saves a stat or a check. */
const MAX_REMEMBERED = 10_000;

/**
 * What the parts of one SessionDB share: its root, the registry, the cached
 * view of each session's history, meta.json, the session lock and the small
 * per-session memories that spare the hot paths a look at the disk. One per
 * SessionDB; the parts (catalogue, node log, turns, commit) hold no state of
 * their own, so a session's caches are forgotten in one place.
 */
export class StoreState {
  /** Absolute sessions root. */
  readonly root: string;
  readonly registry: SessionRegistry;
  readonly history = new HistoryFiles();
  /** meta.json stamped with `updated_at` by a turn's last head move (meta-stamp.ts). */
  readonly metaStamps = new MetaStamps();
  /** Sessions whose `.state/` is known to exist: their lock need not look for it. */
  readonly preparedState = new Set<string>();
  /** Sessions found safe to enter, with the state of their folder and meta.json then (session-catalogue.ts). */
  readonly usableSessions = new Map<string, string>();
  /** Sessions this instance has already checked for a turn abandoned by a crash (turn-recovery.ts). */
  readonly recoveryChecked = new Set<string>();
  private readonly pathsCache = new Map<string, SessionPaths>();

  constructor(root: string) {
    this.root = resolve(root);
    this.registry = SessionRegistry.of(this.root);
  }

  paths(sessionId: string): SessionPaths {
    let paths = this.pathsCache.get(sessionId);
    if (!paths) {
      paths = new SessionPaths(this.root, sessionId);
      if (this.pathsCache.size > MAX_REMEMBERED) this.pathsCache.clear();
      this.pathsCache.set(sessionId, paths);
    }
    return paths;
  }

  /** The session's paths; SessionNotFoundError when it has no meta.json. */
  requirePaths(sessionId: string): SessionPaths {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    return paths;
  }

  /** A meta.json that is not a JSON object is a CorruptMetaError. */
  readMetaSync(sessionId: string): SessionMeta {
    const paths = this.paths(sessionId);
    const reading = readMetaFile(paths.meta);
    if (reading.state === "missing") throw new SessionNotFoundError(sessionId);
    if (reading.state === "corrupt")
      throw new CorruptMetaError(sessionId, paths.meta, reading.reason, reading.planted === true);
    return reading.meta;
  }

  /** Merges fields into meta.json; call under the session lock. */
  async writeMeta(sessionId: string, patch: Partial<SessionMeta>): Promise<void> {
    const meta = { ...this.readMetaSync(sessionId), ...patch };
    await this.history.writeLogged(this.paths(sessionId), [this.metaWrite(sessionId, meta, {})], true);
  }

  /** meta.json with `patch` merged, to be written beside a node (writeFilesAtomic); call under the session lock. */
  metaWrite(sessionId: string, meta: SessionMeta, patch: Partial<SessionMeta>): FileWrite {
    return { path: this.paths(sessionId).meta, data: dumpsPython({ ...meta, ...patch }) };
  }

  /** Every node and meta write runs under this lock (see StoreInternals.withSessionLock). */
  async withSessionLock<T>(sessionId: string, section: () => Promise<T>): Promise<T> {
    const paths = this.paths(sessionId);
    // Every node and meta write runs here: nothing is written through a link (see safe-paths.ts).
    assertSafeToWrite(paths);
    this.ensureStateDir(paths);
    try {
      return await withLeasedLock(paths.lock, section, SESSION_LOCK);
    } catch (error) {
      // The lock file could not be created because the session was deleted while this caller waited.
      if (error instanceof StoreWriteError && error.path === paths.lock && !existsSync(paths.dir))
        throw new SessionNotFoundError(sessionId);
      throw error;
    }
  }

  /**
   * Queues a change to one session's registry entry (written with others
   * shortly after: registry.ts). A session with no meta.json (deleted
   * meanwhile) is SessionNotFoundError, and a late change never re-creates the
   * entry of a deleted session.
   */
  queueEntry(
    sessionId: string,
    change: (current: SessionRecord) => SessionRecord,
    fallback = (): SessionRecord => registryEntryFromMeta(this.readMetaSync(sessionId)),
  ): void {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    this.registry.queue(sessionId, { sessionDir: paths.dir, fallback, change });
  }

  /**
   * Changes one session's registry entry under the registry lock. A session
   * with no meta.json (deleted meanwhile) is SessionNotFoundError: a late
   * status write never re-creates the entry of a deleted session.
   */
  async updateEntry(sessionId: string, change: (current: SessionRecord) => SessionRecord): Promise<SessionRecord> {
    const paths = this.paths(sessionId);
    let updated: SessionRecord | undefined;
    await this.registry.update((entries) => {
      if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
      updated = change(entries[sessionId] ?? registryEntryFromMeta(this.readMetaSync(sessionId)));
      entries[sessionId] = updated;
    });
    return updated as SessionRecord;
  }

  noteRecoveryChecked(sessionId: string): void {
    if (this.recoveryChecked.size >= MAX_REMEMBERED) this.recoveryChecked.clear();
    this.recoveryChecked.add(sessionId);
  }

  noteUsable(sessionId: string, key: string): void {
    if (this.usableSessions.size > MAX_REMEMBERED) this.usableSessions.clear();
    this.usableSessions.set(sessionId, key);
  }

  /** Forgets everything remembered of a session (it was deleted). */
  forgetSession(sessionId: string): void {
    const paths = this.paths(sessionId);
    this.history.forget(paths);
    this.preparedState.delete(paths.state);
    this.usableSessions.delete(sessionId);
    this.recoveryChecked.delete(sessionId);
    this.metaStamps.forget(sessionId);
    forgetSpareStock(paths);
  }

  ensureRoot(): void {
    // One look when it is there (mkdir -p of an existing folder fails, then looks anyway).
    if (existsSync(this.root)) return;
    try {
      mkdirSync(this.root, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      throw new StoreWriteError(this.root, error);
    }
  }

  /**
   * `.state/` is ours; sessions written by the Python store do not have it
   * yet. Never recursive: a session deleted meanwhile is not brought back as
   * an empty directory.
   */
  private ensureStateDir(paths: SessionPaths): void {
    if (this.preparedState.has(paths.state)) return;
    try {
      mkdirSync(paths.state, { mode: DIR_MODE });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") throw new SessionNotFoundError(basename(paths.dir));
      if (code !== "EEXIST") throw new StoreWriteError(paths.state, error);
    }
    this.preparedState.add(paths.state);
  }
}
