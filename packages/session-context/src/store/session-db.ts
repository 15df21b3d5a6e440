import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  InvalidInputError,
  NodeNotFoundError,
  SessionExistsError,
  SessionNotFoundError,
  StoreWriteError,
} from "../errors.js";
import { assertValidIdPrefix, assertValidSessionId, mintPrefixedId } from "../ids.js";
import { dumpsPython } from "../json/python-json.js";
import { DIR_MODE, FILE_MODE, writeFileAtomic } from "./atomic-file.js";
import { defaultSessionsRoot } from "./default-root.js";
import { statusAfterAbandon, statusWhenIdle } from "./abandoned-turn.js";
import { withLock } from "./file-lock.js";
import { withLeasedLock } from "./lease-lock.js";
import { commitAll, readLog } from "./git-repo.js";
import { historyProblems, HistoryFiles, nowSeconds, orderedNodes } from "./history.js";
import { SessionPaths } from "./layout.js";
import { registryEntryFromMeta, SessionRegistry } from "./registry.js";
import { hasLeaseFiles, liveTurnLeases, releaseTurnLease, takeTurnLease } from "./turn-lease.js";
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
} from "./types.js";

/** Options of `new SessionDB()`. */
export interface SessionDBOptions {
  /** Sessions root; default `$OPENPROGRAM_HOME/sessions`. */
  root?: string;
}

/** What `createSession` accepts. */
export interface CreateSessionOptions {
  /** The id to use; minted as `<idPrefix>_<10 hex>` when absent. */
  id?: string;
  idPrefix?: string;
  agentId?: string;
  source?: string;
  title?: string;
  /** Extra fields stored in meta.json, as the Python store's `**extra`. */
  extra?: Record<string, unknown>;
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

/** Registry fields that belong to meta.json as well, and stay in step there. */
const META_FIELDS = new Set(["title", "agent_id", "source"]);
/** A session lock's holder touches it every 2 s while it holds it; one untouched this long was left by a killed process. */
const SESSION_LOCK = { staleMs: 10_000, timeoutMs: 30_000 };
/** How long to wait for another process to finish creating a session it has claimed. */
const CREATE_WAIT_MS = 2_000;

/**
 * The git-backed session store: one directory and one git repository per
 * session, in exactly the layout of the Python OpenProgram store.
 *
 * Writes are atomic and durable and run off the event loop's thread (a server
 * keeps serving while the disk flushes); they are serialised per session, in
 * this process and across processes, by a lock. Reads are synchronous and
 * lock-free: files appear whole (renamed into place) and a per-session change
 * journal keeps the in-memory view exact. A turn ends with one git commit.
 */
export class SessionDB {
  /** Absolute sessions root. */
  readonly root: string;
  private readonly registry: SessionRegistry;
  private readonly history = new HistoryFiles();
  private readonly pathsCache = new Map<string, SessionPaths>();
  private readonly preparedState = new Set<string>();

  constructor(options: SessionDBOptions = {}) {
    this.root = resolve(options.root ?? defaultSessionsRoot());
    this.registry = new SessionRegistry(this.root);
  }

  /** Paths of a session (validates the id first). */
  paths(sessionId: string): SessionPaths {
    let paths = this.pathsCache.get(sessionId);
    if (!paths) {
      paths = new SessionPaths(this.root, sessionId);
      if (this.pathsCache.size > 10_000) this.pathsCache.clear();
      this.pathsCache.set(sessionId, paths);
    }
    return paths;
  }

  // ---- sessions -------------------------------------------------------

  /** True when the session exists (has a meta.json). Cheap: one stat. */
  hasSession(sessionId: string): boolean {
    return existsSync(this.paths(sessionId).meta);
  }

  /** Creates a session; fails with SessionExistsError when the id is taken. */
  async createSession(options: CreateSessionOptions = {}): Promise<SessionRecord> {
    const created = await this.tryCreate(options);
    if (!created) throw new SessionExistsError(options.id ?? "");
    return created;
  }

  /** Returns the session, creating it under this id when it does not exist. */
  async ensureSession(
    sessionId: string,
    options: Omit<CreateSessionOptions, "id"> = {},
  ): Promise<{ record: SessionRecord; created: boolean }> {
    const created = await this.openSession(sessionId, options);
    return { record: await this.requireSession(sessionId), created };
  }

  /**
   * The hot path of entering a session: one stat when it exists (plus a look
   * at its turn leases, to recover a crashed turn), a create when it does not.
   * Resolves to true when it created the session.
   */
  async openSession(sessionId: string, options: Omit<CreateSessionOptions, "id"> = {}): Promise<boolean> {
    const paths = this.paths(sessionId);
    if (existsSync(paths.meta)) {
      if (hasLeaseFiles(paths)) await this.recoverIfAbandoned(sessionId);
      return false;
    }
    return (await this.tryCreate({ ...options, id: sessionId })) !== null;
  }

  /** Mints an id and creates the session under it; resolves to the id. */
  async createNewSession(options: Omit<CreateSessionOptions, "id"> = {}): Promise<string> {
    for (;;) {
      const record = await this.tryCreate(options);
      if (record) return record.id;
    }
  }

  /** Creates the session, or resolves to null when another caller created it first. */
  private async tryCreate(options: CreateSessionOptions): Promise<SessionRecord | null> {
    if (options.idPrefix !== undefined) assertValidIdPrefix(options.idPrefix);
    const sessionId = options.id ?? mintPrefixedId(options.idPrefix ?? "session");
    assertValidSessionId(sessionId);
    if (options.extra !== undefined && (options.extra === null || typeof options.extra !== "object")) {
      throw new InvalidInputError("createSession: extra must be an object of additional meta.json fields.");
    }
    const paths = this.paths(sessionId);
    this.ensureRoot();
    if (!this.claim(paths) && (await this.createdByOther(paths))) return null;
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
    try {
      for (const directory of [paths.history, paths.context, paths.workdir, paths.state]) {
        mkdirSync(directory, { recursive: true, mode: DIR_MODE });
      }
      writeFileSync(paths.gitkeep, "", { mode: FILE_MODE });
      // meta.json makes the session exist; a crash before the registry write is repaired by the next getSession.
      await writeFileAtomic(paths.meta, dumpsPython(meta));
      const entry = registryEntryFromMeta(meta);
      await this.registry.update((entries) => {
        entries[sessionId] = entry;
      });
      return { ...entry };
    } catch (error) {
      // Never leave a half-made session behind.
      rmSync(paths.dir, { recursive: true, force: true });
      throw error instanceof StoreWriteError ? error : new StoreWriteError(paths.dir, error);
    }
  }

  /** mkdir without `recursive` is the atomic claim on an id; false when the directory exists. */
  private claim(paths: SessionPaths): boolean {
    try {
      mkdirSync(paths.dir, { mode: DIR_MODE });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw new StoreWriteError(paths.dir, error);
    }
  }

  /**
   * The directory exists: true once its meta.json appears (another caller
   * created the session); false when it never does (a create that crashed, whose
   * leftovers this caller may take over).
   */
  private async createdByOther(paths: SessionPaths): Promise<boolean> {
    const deadline = Date.now() + CREATE_WAIT_MS;
    while (!existsSync(paths.meta)) {
      if (Date.now() > deadline) return false;
      await new Promise((resolveWait) => setTimeout(resolveWait, 10));
    }
    return true;
  }

  /** The registry entry of a session, or null. */
  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const paths = this.paths(sessionId);
    const entries = await this.registryEntries();
    const entry = entries[sessionId];
    if (entry) return { ...entry };
    if (!existsSync(paths.meta)) return null;
    // On disk but missing from the registry (written by a crashed create): add it back.
    const rebuilt = registryEntryFromMeta(this.readMetaSync(sessionId));
    await this.registry.update((all) => {
      all[sessionId] ??= rebuilt;
    });
    return { ...rebuilt };
  }

  /** Like getSession, but a missing session is a SessionNotFoundError. */
  async requireSession(sessionId: string): Promise<SessionRecord> {
    const record = await this.getSession(sessionId);
    if (!record) throw new SessionNotFoundError(sessionId);
    return record;
  }

  /** `meta.json` of a session. */
  async readMeta(sessionId: string): Promise<SessionMeta> {
    return this.readMetaSync(sessionId);
  }

  /** Synchronous readMeta, for the core's prompt rendering. */
  readMetaSync(sessionId: string): SessionMeta {
    const paths = this.paths(sessionId);
    let raw: string;
    try {
      raw = readFileSync(paths.meta, "utf8");
    } catch {
      throw new SessionNotFoundError(sessionId);
    }
    return JSON.parse(raw) as SessionMeta;
  }

  /** Sessions from the registry, most recently updated first. */
  async listSessions(options: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const offset = Math.max(0, options.offset ?? 0);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    const all = Object.values(await this.registryEntries()).filter(
      (entry) => options.includeArchived || !entry.archived,
    );
    all.sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0) || a.id.localeCompare(b.id));
    return all.slice(offset, offset + limit).map((entry) => ({ ...entry }));
  }

  /** Changes registry fields (and the matching meta.json fields). */
  async updateSession(sessionId: string, patch: SessionPatch): Promise<SessionRecord> {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    if ("id" in patch) throw new InvalidInputError("updateSession cannot change a session's id.");
    const metaPatch = Object.fromEntries(Object.entries(patch).filter(([key]) => META_FIELDS.has(key)));
    if (Object.keys(metaPatch).length > 0)
      await this.withSessionLock(sessionId, () => this.writeMeta(sessionId, metaPatch));
    const entries = await this.registry.update((all) => {
      const current = all[sessionId] ?? registryEntryFromMeta(this.readMetaSync(sessionId));
      all[sessionId] = { ...current, ...patch, id: sessionId };
    });
    return { ...(entries[sessionId] as SessionRecord) };
  }

  /** Deletes a session's directory and registry entry; false when it did not exist. */
  async deleteSession(sessionId: string): Promise<boolean> {
    const paths = this.paths(sessionId);
    const existed = existsSync(paths.dir);
    let inRegistry = false;
    await this.registry.update((entries) => {
      inRegistry = sessionId in entries;
      delete entries[sessionId];
    });
    if (existed) rmSync(paths.dir, { recursive: true, force: true });
    this.history.forget(paths);
    this.preparedState.delete(paths.state);
    return existed || inRegistry;
  }

  // ---- nodes ------------------------------------------------------------

  /** Appends a node with the next seq; moves head_id when it extends the head. */
  async appendNode(sessionId: string, draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, async () => {
      const { node, movedHead } = await this.history.append(paths, draft, options, () => this.readMetaSync(sessionId));
      if (movedHead) await this.writeMeta(sessionId, { head_id: node.id });
      return node;
    });
  }

  /** Replaces output/input/reads and merges metadata of an existing node. */
  async updateNode(sessionId: string, nodeId: string, patch: NodePatch): Promise<SessionNode> {
    const paths = this.requirePaths(sessionId);
    return this.withSessionLock(sessionId, () => this.history.update(paths, sessionId, nodeId, patch));
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

  /** Ids of the session's turns whose processes are alive (by their turn leases). */
  liveTurnIds(sessionId: string): string[] {
    return liveTurnLeases(this.requirePaths(sessionId));
  }

  /** All readable nodes in seq order. Unreadable files are reported (see readHistory). */
  async loadNodes(sessionId: string): Promise<SessionNode[]> {
    return this.readHistorySync(sessionId).nodes;
  }

  /** Nodes in seq order plus every node file that could not be read, by path. */
  async readHistory(sessionId: string): Promise<SessionHistory> {
    return this.readHistorySync(sessionId);
  }

  /** Synchronous readHistory, for the core's prompt rendering. */
  readHistorySync(sessionId: string): SessionHistory {
    const state = this.history.refresh(this.requirePaths(sessionId));
    return { nodes: [...orderedNodes(state)], problems: historyProblems(state) };
  }

  /**
   * A fresh, shared, read-only view of the session's nodes (by id and in seq
   * order) without copying: the core's prompt rendering reads it on every exec.
   */
  snapshotSync(sessionId: string): { byId: ReadonlyMap<string, SessionNode>; ordered: readonly SessionNode[] } {
    const state = this.history.refresh(this.requirePaths(sessionId));
    return { byId: state.byId, ordered: orderedNodes(state) };
  }

  /** One node by id, or null. */
  async getNode(sessionId: string, nodeId: string): Promise<SessionNode | null> {
    return this.nodeMapSync(sessionId).get(nodeId) ?? null;
  }

  /** Fresh id -> node map of a session (shared, read-only). */
  nodeMapSync(sessionId: string): ReadonlyMap<string, SessionNode> {
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

  /** Commits everything the turn wrote; returns the sha, or null when nothing changed. */
  async commitTurn(sessionId: string, message = "turn"): Promise<string | null> {
    const paths = this.requirePaths(sessionId);
    this.ensureStateDir(paths);
    return withLock(paths.commitLock, () => commitAll(paths, message));
  }

  /** The session's git history, newest first. */
  async gitLog(sessionId: string, options: { maxCount?: number } = {}): Promise<GitLogEntry[]> {
    return readLog(this.requirePaths(sessionId), options.maxCount ?? 100);
  }

  /** Marks the session running and takes the turn lease (crash recovery relies on it). */
  async beginTurn(sessionId: string, turnId: string): Promise<void> {
    const paths = this.requirePaths(sessionId);
    this.ensureStateDir(paths);
    takeTurnLease(paths, turnId);
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
      const sha = await this.commitTurn(sessionId, options.message ?? `turn ${turnId}`);
      const preview = this.previewOf(sessionId);
      const updatedAt = nowSeconds();
      await this.withSessionLock(sessionId, () => this.writeMeta(sessionId, { updated_at: updatedAt }));
      const status = statusWhenIdle(this.snapshotSync(sessionId).ordered, options.status);
      await this.registry.update((entries) => {
        const current = entries[sessionId] ?? registryEntryFromMeta(this.readMetaSync(sessionId));
        entries[sessionId] = {
          ...current,
          status,
          updated_at: updatedAt,
          ...(preview ? { preview } : {}),
        };
      });
      return sha;
    } finally {
      releaseTurnLease(paths, turnId);
    }
  }

  /** Sets the registry status of a session. */
  async setStatus(sessionId: string, status: SessionStatus): Promise<void> {
    await this.registry.update((entries) => {
      const current = entries[sessionId] ?? registryEntryFromMeta(this.readMetaSync(sessionId));
      entries[sessionId] = { ...current, status };
    });
  }

  /**
   * A session whose status says a turn is running, but whose turn processes
   * are all gone, was left by a crash: its running nodes become "interrupted"
   * and its status "idle", or "needs_input" while a question waits (see
   * abandoned-turn.ts). Resolves to true when it recovered one.
   */
  async recoverIfAbandoned(sessionId: string): Promise<boolean> {
    const entry = (await this.registry.read())[sessionId];
    return entry ? this.recoverEntry(entry) : false;
  }

  /** Drops this instance's cached view of a session (after repairs made behind its back). */
  invalidate(sessionId: string): void {
    this.history.forget(this.paths(sessionId));
  }

  /** Runs a section under the session's store lock (for repairs): no other writer in any process runs meanwhile. */
  async withSessionLock<T>(sessionId: string, section: () => Promise<T>): Promise<T> {
    const paths = this.paths(sessionId);
    this.ensureStateDir(paths);
    return withLeasedLock(paths.lock, section, SESSION_LOCK);
  }

  /** Reads and changes the registry under its lock (for repairs). */
  async updateRegistry(
    mutate: (entries: Record<string, SessionRecord>) => void,
  ): Promise<Record<string, SessionRecord>> {
    return this.registry.update(mutate);
  }

  // ---- internals --------------------------------------------------------

  /** Registry entries, with crash leftovers recovered first. */
  private async registryEntries(): Promise<Record<string, SessionRecord>> {
    let entries = await this.registry.read();
    let recovered = false;
    for (const entry of Object.values(entries)) {
      if (entry.status === "running" || entry.status === "needs_input")
        recovered = (await this.recoverEntry(entry)) || recovered;
    }
    if (recovered) entries = await this.registry.read();
    return entries;
  }

  private async recoverEntry(entry: SessionRecord): Promise<boolean> {
    if (entry.status !== "running" && entry.status !== "needs_input") return false;
    let paths: SessionPaths;
    try {
      paths = this.paths(entry.id);
    } catch {
      return false;
    }
    if (!existsSync(paths.meta) || liveTurnLeases(paths).length > 0) return false;
    try {
      const changed = await this.interruptUnfinished(entry.id);
      const status = statusWhenIdle(this.snapshotSync(entry.id).ordered, "idle");
      // A session waiting for an answer stays needs_input (its question outlives the process): nothing to write.
      if (changed === 0 && status === entry.status) return false;
      await this.registry.update((entries) => {
        const current = entries[entry.id];
        if (current && (current.status === "running" || current.status === "needs_input")) {
          entries[entry.id] = { ...current, status };
        }
      });
      return true;
    } catch (error) {
      // A read-only store still reads; recovery waits for a writable one.
      if (error instanceof StoreWriteError) return false;
      throw error;
    }
  }

  /** Applies the recovery policy (statusAfterAbandon) to every unfinished node; resolves to how many changed. */
  private async interruptUnfinished(sessionId: string): Promise<number> {
    const paths = this.paths(sessionId);
    // Checked without the lock first: a session that only waits for an answer is read often and needs nothing.
    if (!orderedNodes(this.history.refresh(paths)).some((node) => statusAfterAbandon(node) !== null)) return 0;
    return this.withSessionLock(sessionId, async () => {
      const abandoned = orderedNodes(this.history.refresh(paths)).filter((node) => statusAfterAbandon(node) !== null);
      for (const node of abandoned) {
        await this.history.update(paths, sessionId, node.id, {
          metadata: { status: "interrupted", interrupted_at: nowSeconds() },
        });
      }
      return abandoned.length;
    });
  }

  private previewOf(sessionId: string): string | undefined {
    const nodes = this.snapshotSync(sessionId).ordered;
    for (let index = nodes.length - 1; index >= 0; index--) {
      const node = nodes[index] as SessionNode;
      if (node.caller !== "") continue;
      if (node.role === "user" && node.name !== "ask_user" && typeof node.output === "string") return clip(node.output);
      if (node.role === "code") return clip(`${node.name}(${summariseInput(node.input)})`);
    }
    return undefined;
  }

  /** Merges fields into meta.json; call under the session lock. */
  private async writeMeta(sessionId: string, patch: Partial<SessionMeta>): Promise<void> {
    const meta = { ...this.readMetaSync(sessionId), ...patch };
    await writeFileAtomic(this.paths(sessionId).meta, dumpsPython(meta));
  }

  /** `.state/` is ours; sessions written by the Python store do not have it yet. */
  private ensureStateDir(paths: SessionPaths): void {
    if (this.preparedState.has(paths.state)) return;
    try {
      mkdirSync(paths.state, { recursive: true, mode: DIR_MODE });
    } catch (error) {
      throw new StoreWriteError(paths.state, error);
    }
    this.preparedState.add(paths.state);
  }

  private requirePaths(sessionId: string): SessionPaths {
    const paths = this.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    return paths;
  }

  private ensureRoot(): void {
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

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= 120 ? line : `${line.slice(0, 119)}…`;
}

function summariseInput(input: unknown): string {
  if (input && typeof input === "object") {
    const first = Object.values(input as Record<string, unknown>).find((value) => typeof value === "string");
    if (typeof first === "string") return JSON.stringify(first.length > 60 ? `${first.slice(0, 59)}…` : first);
  }
  return "";
}
