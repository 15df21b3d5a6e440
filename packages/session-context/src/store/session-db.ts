import { existsSync } from "node:fs";
import { defaultSessionsRoot } from "./default-root.js";
import { NodeLog } from "./node-log.js";
import { SessionCatalogue } from "./session-catalogue.js";
import type {
  CreateSessionOptions,
  EndTurnOptions,
  ListSessionsOptions,
  OpenSessionOptions,
  SessionDBOptions,
  SessionPatch,
} from "./session-db-options.js";
import { StoreState } from "./store-state.js";
import { registerStoreInternals } from "./internal.js";
import { liveTurnLeases } from "./turn-lease.js";
import { TurnCommit } from "./turn-commit.js";
import { TurnLifecycle } from "./turn-lifecycle.js";
import { TurnRecovery } from "./turn-recovery.js";
import type {
  AppendOptions,
  GitLogEntry,
  NodeDraft,
  NodePatch,
  SessionHistory,
  SessionMeta,
  SessionNode,
  SessionRecord,
  SessionStatus,
  UpdateOptions,
} from "./types.js";

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
 * the core's hot paths and repairs use StoreInternals (store/internal.ts).
 *
 * This class only delegates, to one part per responsibility, all sharing one
 * StoreState: the catalogue of sessions and the registry (session-catalogue.ts),
 * the node log (node-log.ts), the turn lifecycle (turn-lifecycle.ts), crash
 * recovery (turn-recovery.ts) and the commit (turn-commit.ts).
 */
export class SessionDB {
  /** Absolute sessions root. */
  readonly root: string;
  private readonly state: StoreState;
  private readonly catalogue: SessionCatalogue;
  private readonly nodes: NodeLog;
  private readonly commit: TurnCommit;
  private readonly recovery: TurnRecovery;
  private readonly turns: TurnLifecycle;

  constructor(options: SessionDBOptions = {}) {
    const state = new StoreState(options.root ?? defaultSessionsRoot());
    this.state = state;
    this.root = state.root;
    this.catalogue = new SessionCatalogue(state);
    this.nodes = new NodeLog(state);
    this.commit = new TurnCommit(state);
    this.recovery = new TurnRecovery(state, this.nodes);
    this.turns = new TurnLifecycle(state, this.nodes, this.commit, this.recovery);
    const { nodes, recovery } = this;
    registerStoreInternals(this, {
      paths: (sessionId) => state.paths(sessionId),
      exists: (sessionId) => existsSync(state.paths(sessionId).meta),
      readMetaSync: (sessionId) => state.readMetaSync(sessionId),
      readHistorySync: (sessionId) => nodes.readHistorySync(sessionId),
      snapshotSync: (sessionId) => nodes.snapshot(sessionId),
      nodeMapSync: (sessionId) => nodes.nodeMap(sessionId),
      liveTurnIds: (sessionId) => liveTurnLeases(state.requirePaths(sessionId)),
      needsRecoveryCheck: (sessionId) => recovery.needsRecoveryCheck(sessionId),
      writeNodes: (sessionId, writes) => nodes.writeNodes(sessionId, writes),
      writeMetaFields: (sessionId, fields) =>
        state.withSessionLock(sessionId, () => state.writeMeta(sessionId, fields as Partial<SessionMeta>)),
      invalidate: (sessionId) => state.history.forget(state.paths(sessionId)),
      cachedHistoryBytes: () => state.history.bytesCached,
      withSessionLock: (sessionId, section) => state.withSessionLock(sessionId, section),
      updateRegistry: (mutate) => state.registry.update(mutate),
      flushRegistrySync: () => state.registry.flushSync(),
      patchMetaLocked: (sessionId, patch) => state.writeMeta(sessionId, patch),
    });
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
    return this.catalogue.openSession(sessionId, options);
  }

  /**
   * Creates a new session: under `id` (SessionExistsError when it is taken),
   * or under a minted `<idPrefix>_<10 hex>`.
   */
  async createSession(options: CreateSessionOptions = {}): Promise<SessionRecord> {
    return this.catalogue.createSession(options);
  }

  /** The registry entry of a session, or null. The status is as recorded: reading never recovers a crashed turn. */
  async getSession(sessionId: string): Promise<SessionRecord | null> {
    return this.catalogue.getSession(sessionId);
  }

  /** `meta.json` of a session. */
  async readMeta(sessionId: string): Promise<SessionMeta> {
    return this.state.readMetaSync(sessionId);
  }

  /** Sessions from the registry, most recently updated first. */
  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    return this.catalogue.listSessions(options);
  }

  /** Changes registry fields (and the matching meta.json fields). */
  async updateSession(sessionId: string, patch: SessionPatch): Promise<SessionRecord> {
    return this.catalogue.updateSession(sessionId, patch);
  }

  /**
   * Deletes a session's directory and registry entry; false when it did not
   * exist. Refused with SessionBusyError while a turn holds the session (a
   * live turn lease): deletion and a turn's start exclude each other through
   * the session lock, so a turn never runs on a deleted session.
   */
  async deleteSession(sessionId: string): Promise<boolean> {
    return this.catalogue.deleteSession(sessionId);
  }

  // ---- nodes ------------------------------------------------------------

  /** Appends a node with the next seq; moves head_id when it extends the head. */
  async appendNode(sessionId: string, draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    return this.nodes.append(sessionId, draft, options);
  }

  /** Replaces output/input/reads and merges metadata of an existing node. */
  async updateNode(
    sessionId: string,
    nodeId: string,
    patch: NodePatch,
    options: UpdateOptions = {},
  ): Promise<SessionNode> {
    return this.nodes.update(sessionId, nodeId, patch, options);
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
    return this.nodes.updateIf(sessionId, nodeId, decide);
  }

  /** All readable nodes in seq order. Unreadable files are reported (see readHistory). */
  async loadNodes(sessionId: string): Promise<SessionNode[]> {
    return (await this.nodes.readHistory(sessionId)).nodes;
  }

  /** Nodes in seq order plus every node file that could not be read, by path. */
  async readHistory(sessionId: string): Promise<SessionHistory> {
    return this.nodes.readHistory(sessionId);
  }

  /** One node by id, or null. */
  async getNode(sessionId: string, nodeId: string): Promise<SessionNode | null> {
    return (await this.nodes.nodeMapYielding(sessionId)).get(nodeId) ?? null;
  }

  /**
   * The conversation branch ending at `fromNodeId` (default: the head),
   * oldest first, following `predecessor` links.
   */
  async conversationBranch(sessionId: string, fromNodeId?: string | null): Promise<SessionNode[]> {
    return this.nodes.branch(sessionId, fromNodeId);
  }

  // ---- turns and git ----------------------------------------------------

  /** Commits everything the turn wrote; returns the sha, or null when nothing changed. */
  async commitTurn(sessionId: string, message = "turn"): Promise<string | null> {
    return this.commit.commitTurn(sessionId, message);
  }

  /** The session's git history, newest first. */
  async gitLog(sessionId: string, options: { maxCount?: number } = {}): Promise<GitLogEntry[]> {
    return this.commit.gitLog(sessionId, options.maxCount ?? 100);
  }

  /**
   * Takes the turn lease and marks the session running. The lease is taken
   * under the session lock, which deleteSession takes too: a session deleted
   * meanwhile is SessionNotFoundError here, and a session with a live lease is
   * never deleted. Crash recovery relies on the lease as well.
   */
  async beginTurn(sessionId: string, turnId: string): Promise<void> {
    return this.turns.beginTurn(sessionId, turnId);
  }

  /**
   * Ends a turn: nodes still unfinished when no other turn is live are
   * recorded "interrupted", the turn is committed, status and preview are
   * updated and the lease released. Returns the commit sha, or null.
   */
  async endTurn(sessionId: string, turnId: string, options: EndTurnOptions): Promise<string | null> {
    return this.turns.endTurn(sessionId, turnId, options);
  }

  /** Sets the registry status of a session (SessionNotFoundError once it is deleted). */
  async setStatus(sessionId: string, status: SessionStatus): Promise<void> {
    return this.turns.setStatus(sessionId, status);
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
    if (sessionId === undefined) await this.state.registry.flush();
    else await this.state.registry.flushSession(sessionId);
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
    return this.recovery.recover(sessionId);
  }
}
