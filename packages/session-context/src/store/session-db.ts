import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync, type Stats } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import {
  CorruptMetaError,
  InvalidInputError,
  NotASessionError,
  OpenProgramError,
  SessionBusyError,
  NodeNotFoundError,
  SessionExistsError,
  SessionNotFoundError,
  StoreWriteError,
} from "../errors.js";
import { assertValidIdPrefix, assertValidSessionId, isValidSessionId, mintPrefixedId, randomHex } from "../ids.js";
import { dumpsPython } from "../json/python-json.js";
import { DIR_MODE, type FileWrite } from "./atomic-file.js";
import { checkpointWalIfLarge } from "./wal-recovery.js";
import { writeSessionFolder } from "./session-folder.js";
import { fsyncPath } from "./fsync-path.js";
import { defaultSessionsRoot } from "./default-root.js";
import { statusAfterAbandon, statusWhenIdle } from "./abandoned-turn.js";
import { withLeasedLock } from "./lease-lock.js";
import { commitAll, readLog, rememberNewRepository } from "./git-repo.js";
import { historyProblems, HistoryFiles, orderedNodes } from "./history.js";
import { clipLine, clipText } from "../messages/clip-text.js";
import { nowSeconds } from "../time/now-seconds.js";
import { CREATING_PREFIX, SessionPaths } from "./layout.js";
import { readMetaFile } from "./meta-file.js";
import { MetaStamps } from "./meta-stamp.js";
import { registryEntryFromMeta, SessionRegistry } from "./registry.js";
import { assertSafeToWrite, lstatOrNull, refuseExisting } from "./safe-paths.js";
import { registerStoreInternals } from "./store-internals.js";
import { recordUsageTotal } from "./usage-total.js";
import { hasLeaseFiles, liveTurnLeases, releaseTurnLease, takeTurnLease } from "./turn-lease.js";
import type {
  AppendOptions,
  UpdateOptions,
  GitLogEntry,
  NodeDraft,
  NodePatch,
  SessionHistory,
  SessionMeta,
  SessionNode,
  SessionRecord,
  SessionStatus,
} from "./types.js";

/** Options of `new SessionDB()`. */
export interface SessionDBOptions {
  /** Sessions root; default `$OPENPROGRAM_HOME/sessions`. */
  root?: string;
}

/** What `createSession` accepts. */
export interface CreateSessionOptions {
  /** The id to use (SessionExistsError when it is taken); minted as `<idPrefix>_<10 hex>` when absent. */
  id?: string;
  idPrefix?: string;
  agentId?: string;
  source?: string;
  title?: string;
  /** Extra fields stored in meta.json, as the Python store's `**extra`. */
  extra?: Record<string, unknown>;
  /**
   * A turn starts in the new session at once: its git repository (with the "session init" commit, as the Python
   * store makes it at creation) and its turn-lease folder are made inside the folder renamed into place, instead of
   * each on its own at the first commit and lease. Default false: a session nobody writes to gets no repository.
   */
  forTurn?: boolean;
}

/** What `openSession` accepts: the fields of a session it creates, and whether it may create one. */
export interface OpenSessionOptions extends Omit<CreateSessionOptions, "id" | "idPrefix"> {
  /** False: a missing session is a SessionNotFoundError instead of being created. Default true. */
  create?: boolean;
}

/** Options of `listSessions`. */
export interface ListSessionsOptions {
  limit?: number;
  offset?: number;
  /** Archived sessions are hidden unless this is true. */
  includeArchived?: boolean;
}

/** Fields `updateSession` may change. */
export type SessionPatch = Partial<
  Pick<SessionRecord, "title" | "status" | "pinned" | "archived" | "unread" | "preview">
> &
  Record<string, unknown>;

/** How a turn ended, for `endTurn`. */
export interface EndTurnOptions {
  status: SessionStatus;
  message?: string;
}

/** Session statuses that say a turn holds the session. */
const TURN_STATUSES = new Set<string>(["running", "needs_input"]);
/** Sessions remembered as checked for an abandoned turn; past this the memory starts over (a re-check is cheap). */
const MAX_RECOVERY_CHECKED = 10_000;
/** Registry fields that belong to meta.json as well, and stay in step there. */
const META_FIELDS = new Set(["title", "agent_id", "source"]);
/** A session lock's holder touches it every 2 s while it holds it; one untouched this long was left by a killed process. */
const SESSION_LOCK = { staleMs: 10_000, timeoutMs: 30_000 };
/** How many minted ids to try when each one's name is taken by something that is not a session. */
const MINT_ATTEMPTS = 8;

/**
 * The git-backed session store: one directory and one git repository per
 * session, in exactly the layout of the Python OpenProgram store.
 *
 * Writes are atomic and durable and run off the event loop's thread (a server
 * keeps serving while the disk flushes); they are serialised per session, in
 * this process and across processes, by a lock. Reads are lock-free and
 * synchronous underneath: files appear whole (renamed into place) and a
 * per-session change journal keeps the in-memory view exact. A turn ends with
 * one git commit. The public surface is async, with one way to do each thing;
 * the core's hot paths and repairs use StoreInternals (store-internals.ts).
 */
export class SessionDB {
  /** Absolute sessions root. */
  readonly root: string;
  private readonly registry: SessionRegistry;
  private readonly history = new HistoryFiles();
  private readonly pathsCache = new Map<string, SessionPaths>();
  private readonly preparedState = new Set<string>();
  /** Sessions found safe to enter, with the state of their folder and meta.json then (see assertUsable). */
  private readonly usableSessions = new Map<string, string>();
  /** Sessions this instance has already checked for a turn abandoned by a crash. */
  private readonly recoveryChecked = new Set<string>();
  /** meta.json stamped with `updated_at` by a turn's last head move (meta-stamp.ts). */
  private readonly metaStamps = new MetaStamps();

  constructor(options: SessionDBOptions = {}) {
    this.root = resolve(options.root ?? defaultSessionsRoot());
    this.registry = SessionRegistry.of(this.root);
    registerStoreInternals(this, {
      paths: (sessionId) => this.paths(sessionId),
      exists: (sessionId) => existsSync(this.paths(sessionId).meta),
      readMetaSync: (sessionId) => this.readMetaSync(sessionId),
      readHistorySync: (sessionId) => this.readHistorySync(sessionId),
      snapshotSync: (sessionId) => this.snapshotSync(sessionId),
      nodeMapSync: (sessionId) => this.nodeMapSync(sessionId),
      liveTurnIds: (sessionId) => liveTurnLeases(this.requirePaths(sessionId)),
      needsRecoveryCheck: (sessionId) => !this.recoveryChecked.has(sessionId) || hasLeaseFiles(this.paths(sessionId)),
      writeMetaFields: (sessionId, fields) =>
        this.withSessionLock(sessionId, () => this.writeMeta(sessionId, fields as Partial<SessionMeta>)),
      invalidate: (sessionId) => this.history.forget(this.paths(sessionId)),
      cachedHistoryBytes: () => this.history.bytesCached,
      withSessionLock: (sessionId, section) => this.withSessionLock(sessionId, section),
      updateRegistry: (mutate) => this.registry.update(mutate),
      flushRegistrySync: () => this.registry.flushSync(),
      patchMetaLocked: (sessionId, patch) => this.writeMeta(sessionId, patch),
    });
  }

  private paths(sessionId: string): SessionPaths {
    let paths = this.pathsCache.get(sessionId);
    if (!paths) {
      paths = new SessionPaths(this.root, sessionId);
      if (this.pathsCache.size > 10_000) this.pathsCache.clear();
      this.pathsCache.set(sessionId, paths);
    }
    return paths;
  }

  // ---- sessions -------------------------------------------------------

  /**
   * Opens a session, creating it under this id when it does not exist (unless
   * `create: false`: then SessionNotFoundError). The hot path of entering a
   * session: one stat when it exists. Resolves to true when it created the
   * session. Opening never recovers a crashed turn: `recover` does, and
   * `sessionContext` runs it.
   */
  async openSession(sessionId: string, options: OpenSessionOptions = {}): Promise<boolean> {
    const paths = this.paths(sessionId);
    const metaStat = lstatOrNull(paths.meta);
    if (metaStat) {
      await this.assertUsable(paths, metaStat);
      return false;
    }
    const { create = true, ...fields } = options;
    if (!create) throw new SessionNotFoundError(sessionId);
    return (await this.tryCreate({ ...fields, id: sessionId })) !== null;
  }

  /**
   * Creates a new session: under `id` (SessionExistsError when it is taken),
   * or under a minted `<idPrefix>_<10 hex>`.
   */
  async createSession(options: CreateSessionOptions = {}): Promise<SessionRecord> {
    for (let attempt = 1; ; attempt++) {
      try {
        const created = await this.tryCreate(options);
        if (created) return created;
        if (options.id !== undefined) throw new SessionExistsError(options.id);
      } catch (error) {
        // A minted name taken by a stray file: mint another (a few times; then the root is in a strange state).
        if (options.id !== undefined || !(error instanceof NotASessionError) || attempt >= MINT_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * An existing session may be entered only when the store can write it
   * safely and read its meta.json; a damaged meta.json is marked in the
   * registry (so `sessions list` shows it) and refused with CorruptMetaError.
   */
  private async assertUsable(paths: SessionPaths, metaStat: Stats): Promise<void> {
    // Entering a session is the hot path: the full check runs again only when the session folder or meta.json changed
    // (swapping a folder for a link changes the folder's mtime). Every write checks the links it goes through anyway.
    const dirStat = lstatOrNull(paths.dir);
    const key = `${dirStat?.ino}:${dirStat?.mtimeMs}:${metaStat.ino}:${metaStat.size}:${metaStat.mtimeMs}:${metaStat.ctimeMs}`;
    if (this.usableSessions.get(paths.sessionId) === key) return;
    assertSafeToWrite(paths, [paths.context, paths.workdir, paths.turns]);
    try {
      this.readMetaSync(paths.sessionId);
    } catch (error) {
      if (error instanceof CorruptMetaError) await this.markDamaged(paths.sessionId);
      throw error;
    }
    if (this.usableSessions.size > 10_000) this.usableSessions.clear();
    this.usableSessions.set(paths.sessionId, key);
  }

  private async markDamaged(sessionId: string): Promise<void> {
    try {
      await this.registry.update((entries) => {
        const current = entries[sessionId];
        if (current && current.status !== "damaged") entries[sessionId] = { ...current, status: "damaged" };
      });
    } catch (error) {
      // A read-only store cannot record it; the caller still gets the CorruptMetaError.
      if (!(error instanceof StoreWriteError)) throw error;
    }
  }

  /**
   * Creates the session, or resolves to null when another caller created it
   * first. The session is built whole in a hidden folder and renamed into
   * place, so the only thing that can already be at its path is a session (then
   * null) or something that is not ours (then NotASessionError): nothing is
   * ever taken over, and nothing is removed but the hidden folder this call made.
   */
  private async tryCreate(options: CreateSessionOptions): Promise<SessionRecord | null> {
    if (options.idPrefix !== undefined) assertValidIdPrefix(options.idPrefix);
    const sessionId = options.id ?? mintPrefixedId(options.idPrefix ?? "session");
    assertValidSessionId(sessionId);
    if (options.extra !== undefined && (options.extra === null || typeof options.extra !== "object")) {
      throw new InvalidInputError("createSession: extra must be an object of additional meta.json fields.");
    }
    const paths = this.paths(sessionId);
    this.ensureRoot();
    if (this.pathTaken(paths)) return null;
    const now = nowSeconds();
    const meta: SessionMeta = {
      id: sessionId,
      agent_id: options.agentId ?? "main",
      title: options.title ?? "",
      source: options.source ?? "",
      created_at: now,
      updated_at: now,
      project_id: "default",
      head_id: null,
      ...(options.extra ?? {}),
    };
    const building = join(this.root, `${CREATING_PREFIX}${sessionId}-${randomHex(8)}`);
    try {
      await writeSessionFolder(building, dumpsPython(meta), options.forTurn === true);
    } catch (error) {
      rmSync(building, { recursive: true, force: true });
      throw error instanceof StoreWriteError ? error : new StoreWriteError(building, error);
    }
    let renamed = false;
    try {
      // Checked once more just before the rename: rename(2) would replace an empty directory that appeared meanwhile.
      if (this.pathTaken(paths)) return null;
      await rename(building, paths.dir);
      renamed = true;
    } catch (error) {
      if (error instanceof OpenProgramError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR" && code !== "EISDIR") {
        throw new StoreWriteError(paths.dir, error);
      }
      // Something appeared at the name between the check and the rename: another creator's session, or not ours.
      if (this.pathTaken(paths)) return null;
      throw refuseExisting(paths);
    } finally {
      if (!renamed) rmSync(building, { recursive: true, force: true });
    }
    try {
      // The rename made durable (a created session survives a crash); the registry, a cache, follows shortly. Each
      // create flushes the root itself: concurrent fsyncs share the file system's journal commit, and queueing them
      // here behind one another was measured to halve the rate of new sessions under load; a group commit (creates
      // arriving during a flush share the next) cost 1.24x the CPU per create with 10 creating at once (issue 19).
      await fsyncPath(this.root);
    } catch (error) {
      // The session is complete on disk and may be in use already: it stays.
      throw error instanceof StoreWriteError ? error : new StoreWriteError(paths.dir, error);
    }
    // Made with the session: its first lock need not look for it, nor its first commit for its repository.
    this.preparedState.add(paths.state);
    if (options.forTurn === true) rememberNewRepository(paths);
    const entry = registryEntryFromMeta(meta);
    this.queueEntry(
      sessionId,
      () => entry,
      () => entry,
    );
    return { ...entry };
  }

  /**
   * True when a session already exists at the path (another caller created
   * it); false when the name is free; NotASessionError (or
   * UnsafeSessionPathError for a link) when something else is there.
   */
  private pathTaken(paths: SessionPaths): boolean {
    const stat = lstatOrNull(paths.dir);
    if (!stat) return false;
    if (stat.isDirectory() && existsSync(paths.meta)) return true;
    throw refuseExisting(paths);
  }

  /** The registry entry of a session, or null. The status is as recorded: reading never recovers a crashed turn. */
  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const paths = this.paths(sessionId);
    const entries = await this.registry.read();
    const entry = entries[sessionId];
    if (entry) return { ...entry };
    if (!existsSync(paths.meta)) return null;
    // On disk but missing from the registry (written by a crashed create): add it back.
    const rebuilt = registryEntryFromMeta(this.readMetaSync(sessionId));
    await this.registry.update((all) => {
      if (existsSync(paths.meta)) all[sessionId] ??= rebuilt;
    });
    return { ...rebuilt };
  }

  /** `meta.json` of a session. */
  async readMeta(sessionId: string): Promise<SessionMeta> {
    return this.readMetaSync(sessionId);
  }

  /** A meta.json that is not a JSON object is a CorruptMetaError. */
  private readMetaSync(sessionId: string): SessionMeta {
    const paths = this.paths(sessionId);
    const reading = readMetaFile(paths.meta);
    if (reading.state === "missing") throw new SessionNotFoundError(sessionId);
    if (reading.state === "corrupt")
      throw new CorruptMetaError(sessionId, paths.meta, reading.reason, reading.planted === true);
    return reading.meta;
  }

  /** Sessions from the registry, most recently updated first. */
  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const offset = Math.max(0, options.offset ?? 0);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    let entries = await this.registry.read();
    if (this.addUnlisted(entries)) entries = await this.registry.read();
    const all = Object.values(entries).filter((entry) => options.includeArchived || !entry.archived);
    all.sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0) || a.id.localeCompare(b.id));
    return all.slice(offset, offset + limit).map((entry) => ({ ...entry }));
  }

  /**
   * Queues a registry entry for each session on disk that the registry does
   * not list (its creator was killed before the registry flush: the registry
   * is a cache of the sessions' own files). One readdir of the root, done by
   * listings, which read every entry anyway. True when it added any.
   */
  private addUnlisted(entries: Readonly<Record<string, SessionRecord>>): boolean {
    let added = false;
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return false;
    }
    for (const name of names) {
      if (name in entries || !isValidSessionId(name)) continue;
      const reading = readMetaFile(join(this.root, name, "meta.json"));
      if (reading.state !== "ok") continue;
      const entry = registryEntryFromMeta({ ...reading.meta, id: name });
      this.queueEntry(
        name,
        (current) => current,
        () => entry,
      );
      added = true;
    }
    return added;
  }

  /** Changes registry fields (and the matching meta.json fields). */
  async updateSession(sessionId: string, patch: SessionPatch): Promise<SessionRecord> {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    if ("id" in patch) throw new InvalidInputError("updateSession cannot change a session's id.");
    const metaPatch = Object.fromEntries(Object.entries(patch).filter(([key]) => META_FIELDS.has(key)));
    if (Object.keys(metaPatch).length > 0)
      await this.withSessionLock(sessionId, () => this.writeMeta(sessionId, metaPatch));
    return { ...(await this.updateEntry(sessionId, (current) => ({ ...current, ...patch, id: sessionId }))) };
  }

  /**
   * Deletes a session's directory and registry entry; false when it did not
   * exist. Refused with SessionBusyError while a turn holds the session (a
   * live turn lease): deletion and a turn's start exclude each other through
   * the session lock, so a turn never runs on a deleted session.
   */
  async deleteSession(sessionId: string): Promise<boolean> {
    const paths = this.paths(sessionId);
    // Only a session is ever removed: a stray file or folder under a session's name is refused, never deleted.
    const stat = lstatSync(paths.dir, { throwIfNoEntry: false });
    if (stat && (!stat.isDirectory() || (!existsSync(paths.meta) && !existsSync(paths.history)))) {
      throw refuseExisting(paths);
    }
    if (existsSync(paths.dir)) {
      const aside = await this.withSessionLock(sessionId, async () => {
        if (liveTurnLeases(paths).length > 0)
          throw new SessionBusyError(
            sessionId,
            "it is running a turn; stop it or wait for it to end, then delete the session",
          );
        // Moved aside first (one rename): from here on no reader or writer finds the session, so no late write
        // can bring its registry entry back. Ids never start with ".", so the aside name is never a session.
        const aside = join(this.root, `.deleted-${sessionId}-${randomHex(8)}`);
        try {
          renameSync(paths.dir, aside);
        } catch (error) {
          throw new StoreWriteError(paths.dir, error);
        }
        this.forgetCaches(sessionId, paths);
        await this.removeEntryIfGone(sessionId, paths);
        return aside;
      });
      // Off the event loop and outside the lock: a server deleting a long session keeps answering meanwhile.
      await rm(aside, { recursive: true, force: true });
      return true;
    }
    const inRegistry = await this.removeEntryIfGone(sessionId, paths);
    this.forgetCaches(sessionId, paths);
    return inRegistry;
  }

  /** Drops the registry entry unless a session (created again meanwhile) is on disk; true when there was one. */
  private async removeEntryIfGone(sessionId: string, paths: SessionPaths): Promise<boolean> {
    let removed = false;
    await this.registry.update((entries) => {
      if (!(sessionId in entries) || existsSync(paths.meta)) return;
      delete entries[sessionId];
      removed = true;
    });
    return removed;
  }

  private forgetCaches(sessionId: string, paths: SessionPaths): void {
    this.history.forget(paths);
    this.preparedState.delete(paths.state);
    this.usableSessions.delete(sessionId);
    this.recoveryChecked.delete(sessionId);
    this.metaStamps.forget(sessionId);
  }

  // ---- nodes ------------------------------------------------------------

  /** Appends a node with the next seq; moves head_id when it extends the head. */
  async appendNode(sessionId: string, draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, async () => {
      // Read once: the head the node links to and the meta.json written beside it when it moves the head.
      let meta: SessionMeta | undefined;
      const readMeta = (): SessionMeta => (meta ??= this.readMetaSync(sessionId));
      const updatedAt = nowSeconds();
      const { node, movedHead } = await this.history.append(paths, draft, options, readMeta, (added, moved) =>
        moved ? [this.metaWrite(sessionId, readMeta(), { head_id: added.id, updated_at: updatedAt })] : [],
      );
      if (movedHead) this.metaStamps.record(paths, updatedAt);
      return node;
    });
  }

  /** Replaces output/input/reads and merges metadata of an existing node. */
  async updateNode(
    sessionId: string,
    nodeId: string,
    patch: NodePatch,
    options: UpdateOptions = {},
  ): Promise<SessionNode> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, async () => {
      const updatedAt = nowSeconds();
      let movedHead = false;
      const node = await this.history.update(
        paths,
        sessionId,
        nodeId,
        patch,
        (updated) => {
          if (!options.advanceHead || updated.caller !== "") return [];
          // Only a reply that still extends the head moves it: a branch made meanwhile keeps its place.
          const meta = this.readMetaSync(sessionId);
          const predecessor = updated.predecessor === "ROOT" ? null : updated.predecessor;
          if ((meta.head_id ?? null) !== predecessor) return [];
          movedHead = true;
          return [this.metaWrite(sessionId, meta, { head_id: updated.id, updated_at: updatedAt })];
        },
        options.deferNameSync === true,
      );
      if (movedHead) this.metaStamps.record(paths, updatedAt);
      return node;
    });
  }

  /**
   * Changes a node only if `decide` says so: under the session lock (no other
   * writer in any process meanwhile) it gets the node as stored now and the
   * turns live in some process, and returns the patch to write or null to
   * leave it. It may throw to refuse. Resolves to the written node, or null.
   */
  async updateNodeIf(
    sessionId: string,
    nodeId: string,
    decide: (node: SessionNode, liveTurnIds: readonly string[]) => NodePatch | null,
  ): Promise<SessionNode | null> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, async () => {
      const node = this.history.refresh(paths).byId.get(nodeId);
      if (!node) throw new NodeNotFoundError(sessionId, nodeId);
      const patch = decide(node, liveTurnLeases(paths));
      return patch === null ? null : this.history.update(paths, sessionId, nodeId, patch);
    });
  }

  /** All readable nodes in seq order. Unreadable files are reported (see readHistory). */
  async loadNodes(sessionId: string): Promise<SessionNode[]> {
    return (await this.readHistory(sessionId)).nodes;
  }

  /** Nodes in seq order plus every node file that could not be read, by path. */
  async readHistory(sessionId: string): Promise<SessionHistory> {
    // A session not yet cached is read with the event loop let through (a server's other clients wait less).
    const state = await this.history.refreshYielding(this.requirePaths(sessionId));
    return { nodes: [...orderedNodes(state)], problems: historyProblems(state) };
  }

  private readHistorySync(sessionId: string): SessionHistory {
    const state = this.history.refresh(this.requirePaths(sessionId));
    return { nodes: [...orderedNodes(state)], problems: historyProblems(state) };
  }

  /** The core's prompt rendering reads this on every exec: no copying. */
  private snapshotSync(sessionId: string): { byId: ReadonlyMap<string, SessionNode>; ordered: readonly SessionNode[] } {
    const state = this.history.refresh(this.requirePaths(sessionId));
    return { byId: state.byId, ordered: orderedNodes(state) };
  }

  /** One node by id, or null. */
  async getNode(sessionId: string, nodeId: string): Promise<SessionNode | null> {
    return this.nodeMapSync(sessionId).get(nodeId) ?? null;
  }

  private nodeMapSync(sessionId: string): ReadonlyMap<string, SessionNode> {
    return this.history.refresh(this.requirePaths(sessionId)).byId;
  }

  /**
   * The conversation branch ending at `fromNodeId` (default: the head),
   * oldest first, following `predecessor` links.
   */
  async conversationBranch(sessionId: string, fromNodeId?: string | null): Promise<SessionNode[]> {
    const start = fromNodeId === undefined ? this.readMetaSync(sessionId).head_id : fromNodeId;
    return walkBranch(this.nodeMapSync(sessionId), start);
  }

  // ---- turns and git ----------------------------------------------------

  /**
   * Commits everything the turn wrote; returns the sha, or null when nothing changed. Under the session lock, which
   * the turn's last write has usually just held and still leases (a lock of its own cost a lock file made and
   * removed at every turn).
   */
  async commitTurn(sessionId: string, message = "turn"): Promise<string | null> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, async () => {
      const changed = this.history.changedSinceCommit(paths);
      const sha = await commitAll(paths, message, changed);
      this.history.committed(paths);
      // A log grown long is emptied once what it names is durable on its own (wal-recovery.ts).
      await checkpointWalIfLarge(paths);
      return sha;
    });
  }

  /** The session's git history, newest first. */
  async gitLog(sessionId: string, options: { maxCount?: number } = {}): Promise<GitLogEntry[]> {
    return readLog(this.requirePaths(sessionId), options.maxCount ?? 100);
  }

  /**
   * Takes the turn lease and marks the session running. The lease is taken
   * under the session lock, which deleteSession takes too: a session deleted
   * meanwhile is SessionNotFoundError here, and a session with a live lease is
   * never deleted. Crash recovery relies on the lease as well.
   */
  async beginTurn(sessionId: string, turnId: string): Promise<void> {
    const paths = this.requirePaths(sessionId);
    assertSafeToWrite(paths, [paths.turns]);
    await this.withSessionLock(sessionId, async () => {
      if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
      takeTurnLease(paths, turnId);
    });
    await this.setStatus(sessionId, "running");
  }

  /**
   * Ends a turn: nodes still unfinished when no other turn is live are
   * recorded "interrupted", the turn is committed, status and preview are
   * updated and the lease released. Returns the commit sha, or null.
   */
  async endTurn(sessionId: string, turnId: string, options: EndTurnOptions): Promise<string | null> {
    const paths = this.requirePaths(sessionId);
    try {
      if (liveTurnLeases(paths, turnId).length === 0) await this.interruptUnfinished(sessionId);
      // meta.json's updated_at goes into the turn's commit: written after it, it left every
      // session repository dirty (` M meta.json`) and doctor reporting an uncommitted tail. A turn whose last write
      // moved the head wrote it then (meta-stamp.ts).
      const stamped = this.metaStamps.take(paths);
      const updatedAt = stamped ?? nowSeconds();
      await recordUsageTotal(paths, () => this.history.usageBuckets(paths));
      if (stamped === null)
        await this.withSessionLock(sessionId, () =>
          this.history.writeLogged(
            paths,
            [this.metaWrite(sessionId, this.readMetaSync(sessionId), { updated_at: updatedAt })],
            false,
          ),
        );
      // One fdatasync of the log makes meta.json and everything the turn wrote without waiting durable; the commit
      // runs meanwhile (it reads the files, not their durability), and the turn ends once both are done.
      const synced = this.history.settle(paths).then(
        () => null,
        (error: unknown) => error as Error,
      );
      const sha = await this.commitTurn(sessionId, options.message ?? `turn ${turnId}`).finally(async () => {
        const failure = await synced;
        if (failure) throw failure;
      });
      const preview = this.previewOf(sessionId);
      // A turn that ends with a question still waiting leaves the session needs_input (see abandoned-turn.ts).
      const status = statusWhenIdle(this.snapshotSync(sessionId).ordered, options.status);
      this.queueEntry(sessionId, (current) => ({
        ...current,
        status,
        updated_at: updatedAt,
        ...(preview ? { preview } : {}),
      }));
      return sha;
    } catch (error) {
      // The turn is over even when its last writes failed (a full disk): its status must not stay "running".
      try {
        const status = statusWhenIdle(this.snapshotSync(sessionId).ordered, options.status);
        this.queueEntry(sessionId, (current) => ({ ...current, status }));
      } catch {
        // deleted meanwhile, or unreadable: recovery decides from the files
      }
      throw error;
    } finally {
      releaseTurnLease(paths, turnId);
    }
  }

  /** Sets the registry status of a session (SessionNotFoundError once it is deleted). */
  async setStatus(sessionId: string, status: SessionStatus): Promise<void> {
    this.queueEntry(sessionId, (current) => ({ ...current, status }));
  }

  /**
   * Writes the registry changes still queued (a turn's status and preview go
   * to index.json shortly after they change, see registry.ts); resolves once
   * index.json holds them. With a session id: once index.json holds that
   * session's changes, sharing the write with the other sessions' changes and
   * with callers waiting at the same time (a cluster's turn end, before its
   * lease goes).
   */
  async flushRegistry(sessionId?: string): Promise<void> {
    if (sessionId === undefined) await this.registry.flush();
    else await this.registry.flushSession(sessionId);
  }

  /**
   * Recovers the session if its recorded status says a turn holds it but no
   * live process holds a turn lease: it was left by a crash. An explicit step:
   * `sessionContext` runs it when it enters a session for a turn (see
   * StoreInternals.needsRecoveryCheck), resuming and answering run it, and `sessions doctor`
   * reports and fixes the same state; reads never run it (they report the
   * status as recorded). Resolves to true when it recovered the session. Its
   * running nodes become "interrupted" and its status "idle", or
   * "needs_input" while a question waits (see abandoned-turn.ts).
   */
  async recover(sessionId: string): Promise<boolean> {
    const paths = this.paths(sessionId);
    this.noteRecoveryChecked(sessionId);
    if (!existsSync(paths.meta) || liveTurnLeases(paths).length > 0) return false;
    const entry = (await this.registry.read())[sessionId];
    // Decided from the session's own files, not only the registry: a turn's "running" is queued for the registry
    // (registry.ts), so a process killed before that flush leaves running nodes under a registry that says idle.
    const nodes = this.snapshotSync(sessionId).ordered;
    const unfinished = nodes.some((node) => statusAfterAbandon(node) !== null);
    if (!unfinished && (!entry || !TURN_STATUSES.has(entry.status))) return false;
    // A session that only waits for an answer is already as recovery leaves it: nothing to write.
    if (!unfinished && statusWhenIdle(nodes, "idle") === entry?.status) return false;
    try {
      return await this.withSessionLock(sessionId, async () => {
        // Checked again under the lock a turn takes its lease under: a turn that began meanwhile is left alone.
        if (liveTurnLeases(paths).length > 0) return false;
        await this.recoverAbandonedTurn(sessionId);
        return true;
      });
    } catch (error) {
      // A read-only store still reads; recovery waits for a writable one.
      if (error instanceof StoreWriteError) return false;
      throw error;
    }
  }

  /**
   * The recovery policy for a turn whose process is gone, in one place: its
   * running nodes are recorded "interrupted" (a waiting question stays
   * waiting) and a session left "running" or "needs_input" becomes "idle", or
   * "needs_input" while a question waits (abandoned-turn.ts). Call under the session lock, with no
   * live turn lease.
   */
  private async recoverAbandonedTurn(sessionId: string): Promise<void> {
    await this.interruptUnfinishedLocked(sessionId);
    const status = statusWhenIdle(this.snapshotSync(sessionId).ordered, "idle");
    await this.updateEntry(sessionId, (current) =>
      TURN_STATUSES.has(current.status) ? { ...current, status } : current,
    );
  }

  /** Every node and meta write runs under this lock (see StoreInternals.withSessionLock). */
  private async withSessionLock<T>(sessionId: string, section: () => Promise<T>): Promise<T> {
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

  // ---- internals --------------------------------------------------------

  /**
   * Changes one session's registry entry under the registry lock. A session
   * with no meta.json (deleted meanwhile) is SessionNotFoundError: a late
   * status write never re-creates the entry of a deleted session.
   */
  private async updateEntry(
    sessionId: string,
    change: (current: SessionRecord) => SessionRecord,
  ): Promise<SessionRecord> {
    const paths = this.paths(sessionId);
    let updated: SessionRecord | undefined;
    await this.registry.update((entries) => {
      if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
      updated = change(entries[sessionId] ?? registryEntryFromMeta(this.readMetaSync(sessionId)));
      entries[sessionId] = updated;
    });
    return updated as SessionRecord;
  }

  /**
   * Queues a change to one session's registry entry (written with others
   * shortly after: registry.ts). A session with no meta.json (deleted
   * meanwhile) is SessionNotFoundError, and a late change never re-creates the
   * entry of a deleted session.
   */
  private queueEntry(
    sessionId: string,
    change: (current: SessionRecord) => SessionRecord,
    fallback = (): SessionRecord => registryEntryFromMeta(this.readMetaSync(sessionId)),
  ): void {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    this.registry.queue(sessionId, { sessionDir: paths.dir, fallback, change });
  }

  private noteRecoveryChecked(sessionId: string): void {
    if (this.recoveryChecked.size >= MAX_RECOVERY_CHECKED) this.recoveryChecked.clear();
    this.recoveryChecked.add(sessionId);
  }

  private async interruptUnfinished(sessionId: string): Promise<void> {
    // The common turn end leaves nothing unfinished: no lock section for it (one is taken when there is something).
    const nodes = orderedNodes(this.history.refresh(this.paths(sessionId)));
    if (!nodes.some((node) => statusAfterAbandon(node) !== null)) return;
    await this.withSessionLock(sessionId, () => this.interruptUnfinishedLocked(sessionId));
  }

  /** Applies the recovery policy (statusAfterAbandon) to every unfinished node; call under the session lock. */
  private async interruptUnfinishedLocked(sessionId: string): Promise<void> {
    const paths = this.paths(sessionId);
    const abandoned = orderedNodes(this.history.refresh(paths)).filter((node) => statusAfterAbandon(node) !== null);
    for (const node of abandoned) {
      await this.history.update(paths, sessionId, node.id, {
        metadata: { status: "interrupted", interrupted_at: nowSeconds() },
      });
    }
  }

  private previewOf(sessionId: string): string | undefined {
    const nodes = this.snapshotSync(sessionId).ordered;
    for (let index = nodes.length - 1; index >= 0; index--) {
      const node = nodes[index] as SessionNode;
      if (node.caller !== "") continue;
      if (node.role === "user" && node.name !== "ask_user" && typeof node.output === "string")
        return clipLine(node.output, 120);
      if (node.role === "code") return clipLine(`${node.name}(${summariseInput(node.input)})`, 120);
    }
    return undefined;
  }

  /** Merges fields into meta.json; call under the session lock. */
  private async writeMeta(sessionId: string, patch: Partial<SessionMeta>): Promise<void> {
    const meta = { ...this.readMetaSync(sessionId), ...patch };
    await this.history.writeLogged(
      this.paths(sessionId),
      [{ path: this.paths(sessionId).meta, data: dumpsPython(meta) }],
      true,
    );
  }

  /** meta.json with `patch` merged, to be written beside a node (writeFilesAtomic); call under the session lock. */
  private metaWrite(sessionId: string, meta: SessionMeta, patch: Partial<SessionMeta>): FileWrite {
    return { path: this.paths(sessionId).meta, data: dumpsPython({ ...meta, ...patch }) };
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

  private requirePaths(sessionId: string): SessionPaths {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    return paths;
  }

  private ensureRoot(): void {
    // One look when it is there (mkdir -p of an existing folder fails, then looks anyway).
    if (existsSync(this.root)) return;
    try {
      mkdirSync(this.root, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      throw new StoreWriteError(this.root, error);
    }
  }
}

/** Follows predecessor links back from `start`; oldest first; stops at ROOT, null, a missing node or a loop. */
export function walkBranch(nodes: ReadonlyMap<string, SessionNode>, start: string | null | undefined): SessionNode[] {
  const branch: SessionNode[] = [];
  const seen = new Set<string>();
  let current = start ?? null;
  while (current !== null && current !== "ROOT" && !seen.has(current)) {
    seen.add(current);
    const node = nodes.get(current);
    if (!node) break;
    branch.push(node);
    current = node.predecessor;
  }
  return branch.reverse();
}

function summariseInput(input: unknown): string {
  if (input && typeof input === "object") {
    const first = Object.values(input as Record<string, unknown>).find((value) => typeof value === "string");
    if (typeof first === "string") return JSON.stringify(clipText(first, 60));
  }
  return "";
}
