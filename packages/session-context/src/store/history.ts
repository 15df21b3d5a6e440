import { closeSync, constants, mkdirSync, openSync, readdirSync, readSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join, relative, sep } from "node:path";
import { crc32 } from "node:zlib";
import { InvalidNodeError, NodeNotFoundError, StoreWriteError } from "../errors.js";
import { mintNodeId } from "../ids.js";
import { nowSeconds } from "../time/now-seconds.js";
import { dumpsPython } from "../json/python-json.js";
import {
  DIR_MODE,
  FILE_MODE,
  renameFilesInPlace,
  renameStaged,
  stageFiles,
  syncFolders,
  type FileWrite,
} from "./atomic-file.js";
import { appendWal, voidRecord, walSyncPlacement } from "./session-wal.js";
import { parseNodeText } from "./node-text.js";
import { HeldFiles, noteUnplaced } from "./held-files.js";
import { soleWriterHere } from "./lease-lock.js";
import { restoreOnRead } from "./restore-on-read.js";
import { takeSpare } from "./spare-files.js";
import { nodeFileName, parseNodeFileName, type SessionPaths } from "./layout.js";
import { reportStoreProblem } from "./registry.js";
import type { UsageBucket } from "../usage/usage-buckets.js";
import { UsageTally } from "../usage/usage-tally.js";
import type {
  AppendOptions,
  HistoryProblem,
  NodeDraft,
  NodePatch,
  NodeRole,
  SessionMeta,
  SessionNode,
} from "./types.js";
import { NotRegularFileError, openRegularFile, readRegularFile } from "./safe-open.js";

export { parseNodeText } from "./node-text.js";

/** How many sessions' node views stay cached; a dropped view is reloaded from disk on next use. */
const MAX_CACHED_SESSIONS = 256;
/** Node files read between two turns of the event loop by refreshYielding (a few ms of parsing on this disk). */
const FILES_PER_SLICE = 500;

/**
 * Bytes of node files the cached views hold at most, besides the most recently used view: a server that
 * has answered many long replies must not keep every one of them in memory until 256 sessions have passed.
 */
export const MAX_CACHED_HISTORY_BYTES = 32 * 1024 * 1024;

/** Largest serialised node accepted (a node is one JSON file). */
export const MAX_NODE_BYTES = 64 * 1024 * 1024;

const ROLES: ReadonlySet<string> = new Set<NodeRole>(["user", "llm", "code"]);
const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** In-memory view of one session's history/ directory. */
interface HistoryState {
  byId: Map<string, SessionNode>;
  bySeq: Map<number, SessionNode>;
  fileById: Map<string, string>;
  problems: Map<string, HistoryProblem>;
  maxSeq: number;
  /** How much of `.state/journal` has been applied. */
  journalOffset: number;
  /** history/ mtime after the last change we know of; a different value means a writer that does not journal. */
  historyMtimeNs: bigint;
  /** The nodes in seq order, kept in step by `remember`; null until someone asks. */
  ordered: SessionNode[] | null;
  /** Writes of this process to this session not finished yet (their temp files change history/'s mtime). */
  writing: number;
  /** The session's usage buckets, kept node by node once asked for (see sessionUsageBuckets). */
  usage: UsageTally | null;
  /** Size of each node file the view holds (its text's length), by file name; `bytes` is their sum. */
  fileBytes: Map<string, number>;
  /** CRC-32 of each node file's text as the view holds it, by file name: what a write over it replaces (session-wal.ts). */
  fileCrc: Map<string, number>;
  bytes: number;
  /** Its key in the cache (the history/ path). */
  key: string;
  /**
   * The node files written since the session's last commit by this process (its writes and those other
   * processes journaled), or null when the view cannot name them all (it was read whole since, or saw a change
   * nobody journaled): the commit then compares every file (see changedSinceCommit).
   */
  changed: Set<string> | null;
}

/**
 * Reads and writes node files, keeping a per-session cache that stays exact
 * across processes: every write by this store appends the file name to the
 * session's journal, so a refresh re-reads only what other processes changed.
 * A change to history/ that was not journaled (the Python store, or a write cut
 * short by a crash) falls back to re-reading the whole directory.
 *
 * `append` and `update` write asynchronously and must run under the session
 * lock; `refresh` is synchronous and safe without it: files appear whole
 * (renamed into place) and are journaled after they appear.
 */
export class HistoryFiles {
  /**
   * Most recently used last; a long-running server keeps at most MAX_CACHED_SESSIONS views, holding at
   * most MAX_CACHED_HISTORY_BYTES of node files besides the most recent one.
   */
  private readonly states = new Map<string, HistoryState>();
  /** Sum of the cached views' `bytes`. */
  private cachedBytes = 0;
  /**
   * By history folder: the files written through the log since its last fdatasync (writeLogged). The next
   * durable write or the turn's end (settle) makes them durable; without a log, they are fsynced one by one.
   */
  private readonly unsynced = new Map<string, Set<string>>();
  /** Node files logged and not yet in place (AppendOptions.holdFile). */
  readonly held = new HeldFiles();

  /** Brings the cached view of the session up to date and returns it. */
  refresh(paths: SessionPaths): HistoryState {
    const state = this.states.get(paths.history);
    if (state) {
      this.states.delete(paths.history);
      this.states.set(paths.history, state);
    }
    const historyMtimeNs = historyMtime(paths);
    if (state) {
      const journalSize = sizeOrZero(paths.journal);
      if (journalSize === state.journalOffset && historyMtimeNs === state.historyMtimeNs) return state;
      // While this process writes (holding the session lock, so nobody else can), the change is ours and not yet journaled.
      if (journalSize === state.journalOffset && state.writing > 0) return state;
      if (journalSize > state.journalOffset) {
        this.applyJournal(paths, state, journalSize);
        state.historyMtimeNs = historyMtimeNs;
        return state;
      }
    }
    return this.reloadAll(paths);
  }

  /** The session's usage buckets, up to date with its nodes (see sessionUsageBuckets). */
  usageBuckets(paths: SessionPaths): UsageBucket[] {
    return sessionUsageBuckets(this.refresh(paths));
  }

  /** Makes every logged write of the session durable (one fdatasync of its log, when one is owed). */
  async settle(paths: SessionPaths): Promise<void> {
    if (!this.unsynced.has(paths.history)) return;
    try {
      await appendWal(paths.wal, [], true, syncLogHere(paths));
      this.unsynced.delete(paths.history);
    } catch {
      await this.syncUnsyncedFiles(paths);
    }
  }

  /**
   * The node files changed since the last `committed` of the session, when every change to history/ since is
   * known (journaled, and history/'s mtime is the one the last known change left); else null. Under the session
   * lock. Lets the commit compare only these files with its index instead of every file of a long session.
   */
  changedSinceCommit(paths: SessionPaths): ReadonlySet<string> | null {
    const state = this.refresh(paths);
    if (state.changed === null || state.writing > 0 || historyMtime(paths) !== state.historyMtimeNs) return null;
    return new Set(state.changed);
  }

  /** The session was just committed with every file compared or named by changedSinceCommit: start naming anew. */
  committed(paths: SessionPaths): void {
    const state = this.states.get(paths.history);
    if (!state) return;
    state.changed = historyMtime(paths) === state.historyMtimeNs ? new Set() : null;
  }

  /** Drops the cached view (after deleting a session). */
  forget(paths: SessionPaths): void {
    this.drop(paths.history);
    this.unsynced.delete(paths.history);
    this.held.drop(paths);
  }

  /** Bytes of node files the cached views hold (for tests). */
  get bytesCached(): number {
    return this.cachedBytes;
  }

  private drop(key: string): void {
    const state = this.states.get(key);
    if (!state) return;
    this.states.delete(key);
    this.cachedBytes -= state.bytes;
  }

  /**
   * The node an append would write, and its file's name (nothing written). `state` is the refreshed view; a batch
   * (NodeLog.writeNodes) prepares its appends one after the other against it.
   */
  prepareAppend(
    state: HistoryState,
    draft: NodeDraft,
    options: AppendOptions,
    readMeta: () => SessionMeta,
    /** Appends prepared earlier in the same batch: their seqs and ids are taken. */
    earlier: readonly SessionNode[] = [],
  ): { node: SessionNode; fileName: string; movedHead: boolean } {
    const role = draft.role;
    if (!ROLES.has(role))
      throw new InvalidNodeError(`Node role must be "user", "llm" or "code", not ${JSON.stringify(role)}.`);
    const id = draft.id ?? mintNodeId();
    if (!NODE_ID.test(id))
      throw new InvalidNodeError(`Node id ${JSON.stringify(id)} must be 1-64 letters, digits, '_' or '-'.`);
    if (state.byId.has(id) || earlier.some((node) => node.id === id))
      throw new InvalidNodeError(`Node id ${id} already exists in this session.`);
    if (draft.createdAt !== undefined && !(Number.isFinite(draft.createdAt) && draft.createdAt > 0))
      throw new InvalidNodeError(
        `Node createdAt must be a positive number of Unix seconds, not ${JSON.stringify(draft.createdAt)}; leave it out for now.`,
      );
    const caller = draft.caller ?? "";
    let predecessor = draft.predecessor ?? null;
    let movedHead = false;
    if (options.atHead || (caller === "" && predecessor !== null)) {
      const head = readMeta().head_id ?? null;
      if (options.atHead) {
        predecessor = head ?? (options.rootMarker === undefined ? "ROOT" : options.rootMarker);
        movedHead = options.moveHead !== false;
      } else {
        movedHead = options.becomeHead === true || (head !== null && predecessor === head);
      }
    }
    const node: SessionNode = {
      id,
      created_at: draft.createdAt ?? nowSeconds(),
      seq: state.maxSeq + 1 + earlier.length,
      role,
      name: draft.name ?? "",
      input: draft.input ?? null,
      output: draft.output ?? null,
      caller,
      predecessor,
      reads: draft.reads ?? [],
      metadata: draft.metadata ?? {},
    };
    return { node, fileName: nodeFileName(node.seq, role, id), movedHead };
  }

  /** Updates a node (on its own: the turn's recovery, updateIf; NodeLog writes through writeNodes). */
  async update(paths: SessionPaths, sessionId: string, nodeId: string, patch: NodePatch): Promise<SessionNode> {
    const state = this.refresh(paths);
    const { node, fileName } = this.prepareUpdate(state, sessionId, nodeId, patch);
    await this.writeNodes(paths, state, [{ node, fileName, alongside: [] }], true);
    return node;
  }

  /** The node an update would write, and its file's name (nothing written); `state` as in prepareAppend. */
  prepareUpdate(
    state: HistoryState,
    sessionId: string,
    nodeId: string,
    patch: NodePatch,
  ): { node: SessionNode; fileName: string } {
    const current = state.byId.get(nodeId);
    const fileName = state.fileById.get(nodeId);
    if (!current || !fileName) throw new NodeNotFoundError(sessionId, nodeId);
    const node: SessionNode = { ...current, metadata: { ...current.metadata, ...(patch.metadata ?? {}) } };
    if ("output" in patch) node.output = patch.output ?? null;
    if ("input" in patch) node.input = patch.input ?? null;
    if (patch.reads) node.reads = patch.reads;
    return { node, fileName };
  }

  /**
   * Writes prepared nodes (prepareAppend, prepareUpdate) as one logged write: their files (each followed by what
   * it names to write alongside, meta.json when it moves the head) renamed into place in order, those marked `hold`
   * aside (held-files.ts), one append to the log, fdatasynced once when `durable`, and one journal append naming
   * the files put in place. Under the session lock, with the view the nodes were prepared against.
   */
  async writeNodes(
    paths: SessionPaths,
    state: HistoryState,
    writes: ReadonlyArray<{ node: SessionNode; fileName: string; alongside: readonly FileWrite[]; hold?: boolean }>,
    durable: boolean,
  ): Promise<void> {
    const texts = writes.map(({ node }) => {
      const text = dumpsPython(node);
      if (text.length > MAX_NODE_BYTES) {
        throw new InvalidNodeError(
          `Node ${node.id} serialises to ${text.length} bytes; the limit is ${MAX_NODE_BYTES}. Store large artifacts in the work dir instead.`,
        );
      }
      return text;
    });
    const files: FileWrite[] = [];
    const replaces: Array<number | null | undefined> = [];
    const toHold = new Set<FileWrite>();
    const nodeFiles = writes.map(({ node, fileName, alongside, hold }, index) => {
      const file = { path: join(paths.history, fileName), data: texts[index] as string };
      // Only a file nothing written beside it names (a head in meta.json must name a file in place).
      if (hold === true && alongside.length === 0) toHold.add(file);
      files.push(file, ...alongside);
      // The view was refreshed under the session lock just before: the text it holds for the file is the one on
      // disk (a change nobody journaled would have reloaded it), so the write need not read the file back for its CRC.
      replaces.push(state.fileById.get(node.id) === fileName ? state.fileCrc.get(fileName) : null);
      for (let more = 0; more < alongside.length; more++) replaces.push(undefined);
      return file;
    });
    state.writing++;
    let held: ReadonlySet<FileWrite>;
    try {
      held = await this.writeLogged(paths, files, durable, replaces, toHold);
    } finally {
      state.writing--;
    }
    const placed: string[] = [];
    writes.forEach(({ node, fileName }, index) => {
      const text = texts[index] as string;
      this.remember(state, fileName, freezeNode(node), text.length, crc32(text));
      state.changed?.add(fileName);
      // A file left held was held by writeLogged; any other is in place, replacing what this store held of it.
      if (!held.has(nodeFiles[index] as FileWrite)) {
        this.held.release(paths, fileName);
        placed.push(fileName);
      }
    });
    this.evictIdle();
    this.journal(paths, state, placed);
  }

  /**
   * Puts the session's held node files in place (AppendOptions.holdFile): renamed as any node file is, without a
   * log record of their own (their write logged them) and journaled. Under the session lock.
   */
  async placeHeld(paths: SessionPaths): Promise<void> {
    const texts = [...this.held.of(paths)];
    if (texts.length === 0) return;
    const state = this.refresh(paths);
    state.writing++;
    try {
      const files = texts.map(([fileName, data]) => ({ path: join(paths.history, fileName), data }));
      await renameFilesInPlace(files, false, () => takeSpare(paths));
    } finally {
      state.writing--;
      // Failed too: no longer held, so the session's lock is not kept for them. The log has them, and the next
      // read holding the lock puts them in place (restore-on-read.ts), this process's included.
      for (const [fileName] of texts) this.held.release(paths, fileName);
    }
    this.journal(
      paths,
      state,
      texts.map(([fileName]) => fileName),
    );
  }

  /** Appends the names of files this process just put in place to the session's journal. */
  private journal(paths: SessionPaths, state: HistoryState, names: readonly string[]): void {
    if (names.length === 0) return;
    if (appendJournalLines(paths.journal, names)) {
      // Under the session lock nobody else appends to the journal, so our lines are the only growth.
      state.journalOffset += names.reduce((sum, name) => sum + Buffer.byteLength(name) + 1, 0);
      state.historyMtimeNs = historyMtime(paths);
    } else {
      // The nodes are safely on disk; without their journal lines every reader, this one included, re-reads history/.
      state.historyMtimeNs = -1n;
    }
  }

  /**
   * Writes files of the session (node files, meta.json) through its write-ahead log: each renamed into place
   * whole without an fsync of its own, its text appended to `.state/wal` meanwhile, and with `durable` the log
   * fdatasynced, which makes this write and every logged one before it durable (session-wal.ts). Without
   * `durable` the write survives the process being killed, and a power cut only with the next durable write.
   * Files in `hold` are logged and not renamed (AppendOptions.holdFile); resolves to those left held, none when the
   * log could not be written (they are then put in place and fsynced with the rest). Under the session lock.
   */
  async writeLogged(
    paths: SessionPaths,
    files: readonly FileWrite[],
    durable: boolean,
    /** The CRC-32 of the text each file replaces, where the caller knows it (null: a new file); read when undefined. */
    knownReplaces: ReadonlyArray<number | null | undefined> = [],
    hold: ReadonlySet<FileWrite> = NOTHING_HELD,
  ): Promise<ReadonlySet<FileWrite>> {
    // What each write replaces, so that recovery knows the old text as ours to roll forward (wal-recovery.ts).
    const replaces = files.map((file, index) => {
      const known = knownReplaces[index];
      return known === undefined ? crcOfFileOrNull(file.path) : known;
    });
    const staged = await stageFiles(hold.size === 0 ? files : files.filter((file) => !hold.has(file)), false, () =>
      takeSpare(paths),
    );
    let pending = this.unsynced.get(paths.history);
    if (!pending) this.unsynced.set(paths.history, (pending = new Set()));
    for (const file of files) pending.add(file.path);
    const records = files.map((file, index) => ({
      rel: relative(paths.dir, file.path).split(sep).join("/"),
      data: textOf(file),
      replaces: replaces[index] ?? null,
    }));
    // The log's append and fdatasync and the renames at once: the write waits for the slower, not for both. A
    // reader that restores from the log holds the session's lock (restore-on-read.ts), so a text logged before its
    // file is in place is never put there by anyone else meanwhile.
    const placing = noteUnplaced(paths.history);
    try {
      // With the fdatasync made on this thread (appendWal's syncHere) the renames go first, so that it overlaps the
      // first of them; else the fdatasync is queued on the pool first, as the slower of the two.
      const syncHere = durable && syncLogHere(paths);
      let renaming = syncHere ? renameStaged(staged) : null;
      const logging = appendWal(paths.wal, records, durable, syncHere);
      renaming ??= renameStaged(staged);
      const [logged, renamed] = await Promise.allSettled([logging, renaming]);
      if (renamed.status === "rejected") {
        // What this write logged and did not put in place: the files it failed to rename, and those it held.
        const unplaced = [...staged.entries.slice(staged.renamed), ...hold].map((entry) => entry.path);
        if (logged.status === "fulfilled") await this.takeBack(paths, unplaced, durable);
        for (const path of unplaced) pending.delete(path);
        throw renamed.reason;
      }
      if (logged.status === "rejected") {
        // Without the log, the files are made durable on their own, as before it existed.
        reportStoreProblem(
          `The write-ahead log ${paths.wal} cannot be written (${(logged.reason as Error).message}); fsyncing files instead.`,
        );
        // Nothing holds a file the log does not: in place, then durable with the rest.
        if (hold.size > 0) await renameFilesInPlace([...hold], false, () => takeSpare(paths));
        await this.syncUnsyncedFiles(paths);
        return NOTHING_HELD;
      }
      if (durable) this.unsynced.delete(paths.history);
      for (const file of hold) this.held.hold(paths, basename(file.path), textOf(file));
      return hold;
    } finally {
      placing();
    }
  }

  /**
   * A write whose renames failed fails: the texts it logged for files it did not put in place are taken back
   * (VOID_MARKER), so that no recovery puts them there later. When even that append fails, it is reported.
   */
  private async takeBack(paths: SessionPaths, unplaced: readonly string[], durable: boolean): Promise<void> {
    const rels = unplaced.map((path) => relative(paths.dir, path).split(sep).join("/"));
    try {
      await appendWal(paths.wal, [voidRecord(rels)], durable);
    } catch (error) {
      reportStoreProblem(
        `${rels.join(", ")} in ${paths.dir} could not be put in place and stay in its write-ahead log (${(error as Error).message}): a recovery may put them there.`,
      );
    }
  }

  /** fsyncs, file by file and their folders, what was written since the log's last fdatasync. */
  private async syncUnsyncedFiles(paths: SessionPaths): Promise<void> {
    // Files held earlier are named among them: in place first (the log that held them fails now).
    await this.placeHeld(paths);
    const pending = this.unsynced.get(paths.history);
    if (!pending) return;
    this.unsynced.delete(paths.history);
    const files = [...pending];
    const failure = await syncFolders(files, files[0] ?? paths.history);
    if (failure) throw failure;
    const folders = await syncFolders([...new Set(files.map((file) => dirname(file)))], paths.history);
    if (folders) throw folders;
  }

  private remember(state: HistoryState, fileName: string, node: SessionNode, bytes: number, crc: number): void {
    state.fileCrc.set(fileName, crc);
    const delta = bytes - (state.fileBytes.get(fileName) ?? 0);
    state.fileBytes.set(fileName, bytes);
    state.bytes += delta;
    // Only a view still cached counts (an evicted one may be finishing a write).
    if (this.states.get(state.key) === state) this.cachedBytes += delta;
    state.usage?.touch(node.seq);
    const previous = state.byId.get(node.id);
    state.byId.set(node.id, node);
    state.bySeq.set(node.seq, node);
    state.fileById.set(node.id, fileName);
    state.problems.delete(fileName);
    if (state.ordered && !keepOrdered(state.ordered, node, previous)) state.ordered = null;
    if (node.seq > state.maxSeq) state.maxSeq = node.seq;
  }

  /**
   * The same as refresh, for readers that may wait: a session not yet in the cache is read in slices of
   * files with the event loop let through between them, so a server reading a 100,000-node session for one
   * client keeps answering the others (and /healthz). A view cached meanwhile by a synchronous reader wins.
   */
  async refreshYielding(paths: SessionPaths): Promise<HistoryState> {
    if (this.states.has(paths.history)) return this.refresh(paths);
    restoreOnRead(paths);
    const state = this.emptyState(paths);
    const names = readdirSync(paths.history);
    for (let at = 0; at < names.length; at += FILES_PER_SLICE) {
      if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      for (const fileName of names.slice(at, at + FILES_PER_SLICE)) this.loadFile(paths, state, fileName);
    }
    this.loadHeld(paths, state);
    if (!this.states.has(paths.history)) this.install(paths, state);
    // Whatever was journaled while the slices were read.
    return this.refresh(paths);
  }

  private reloadAll(paths: SessionPaths): HistoryState {
    restoreOnRead(paths);
    const state = this.emptyState(paths);
    for (const fileName of readdirSync(paths.history)) this.loadFile(paths, state, fileName);
    this.loadHeld(paths, state);
    this.install(paths, state);
    return state;
  }

  /** The files this store holds (logged, not in place) are part of the session as it reads it. */
  private loadHeld(paths: SessionPaths, state: HistoryState): void {
    for (const [fileName, text] of this.held.of(paths)) this.loadText(paths, state, fileName, text);
  }

  private install(paths: SessionPaths, state: HistoryState): void {
    this.drop(paths.history);
    this.states.set(paths.history, state);
    this.cachedBytes += state.bytes;
    this.evictIdle();
  }

  private emptyState(paths: SessionPaths): HistoryState {
    // Take the journal size and mtime first: anything written after this is caught by the next refresh.
    const journalOffset = sizeOrZero(paths.journal);
    const historyMtimeNs = historyMtime(paths);
    return {
      byId: new Map(),
      bySeq: new Map(),
      fileById: new Map(),
      problems: new Map(),
      maxSeq: -1,
      journalOffset,
      historyMtimeNs,
      ordered: null,
      writing: 0,
      usage: null,
      fileBytes: new Map(),
      fileCrc: new Map(),
      bytes: 0,
      key: paths.history,
      changed: null,
    };
  }

  /**
   * Drops the least recently used views beyond the limits, never one with a write in flight nor the most
   * recently used one (the session being worked on, whatever its size).
   */
  private evictIdle(): void {
    let newest: HistoryState | undefined;
    for (const state of this.states.values()) newest = state;
    const byteLimit = MAX_CACHED_HISTORY_BYTES + (newest?.bytes ?? 0);
    for (const [key, state] of this.states) {
      if (this.states.size <= MAX_CACHED_SESSIONS && this.cachedBytes <= byteLimit) break;
      if (state.writing === 0 && state !== newest) this.drop(key);
    }
  }

  private applyJournal(paths: SessionPaths, state: HistoryState, journalSize: number): void {
    // Without blocking and regular only: a FIFO planted as the journal would hang every reader of the session.
    const fd = openRegularFile(paths.journal);
    let text: string;
    try {
      const buffer = Buffer.alloc(journalSize - state.journalOffset);
      const read = readSync(fd, buffer, 0, buffer.length, state.journalOffset);
      text = buffer.toString("utf8", 0, read);
    } finally {
      closeSync(fd);
    }
    // Only whole lines count; a line being written now is picked up next time.
    const complete = text.lastIndexOf("\n") + 1;
    state.journalOffset += Buffer.byteLength(text.slice(0, complete));
    const names = new Set(text.slice(0, complete).split("\n").filter(Boolean));
    for (const fileName of names) {
      this.loadFile(paths, state, fileName);
      state.changed?.add(fileName);
    }
    this.evictIdle();
  }

  private loadFile(paths: SessionPaths, state: HistoryState, fileName: string): void {
    const parsed = parseNodeFileName(fileName);
    if (!parsed) return;
    const path = join(paths.history, fileName);
    let raw: string;
    try {
      raw = readNodeFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      this.recordProblem(state, fileName, { path, message: unreadableReason(error) });
      if (parsed.seq > state.maxSeq) state.maxSeq = parsed.seq;
      return;
    }
    this.loadText(paths, state, fileName, raw);
  }

  private loadText(paths: SessionPaths, state: HistoryState, fileName: string, raw: string): void {
    const parsed = parseNodeFileName(fileName);
    if (!parsed) return;
    const path = join(paths.history, fileName);
    const node = parseNodeText(raw, parsed.seq);
    if (typeof node === "string") {
      this.recordProblem(state, fileName, { path, message: node });
      // Its seq stays taken so that no new node reuses it.
      if (parsed.seq > state.maxSeq) state.maxSeq = parsed.seq;
      return;
    }
    const previous = state.byId.get(node.id);
    if (previous && previous.seq !== node.seq) {
      state.bySeq.delete(previous.seq);
      state.usage?.touch(previous.seq);
    }
    this.remember(state, fileName, freezeNode(node), raw.length, crc32(raw));
  }

  private recordProblem(state: HistoryState, fileName: string, problem: HistoryProblem): void {
    if (!state.problems.has(fileName)) reportStoreProblem(`Corrupt node file ${problem.path}: ${problem.message}`);
    state.problems.set(fileName, problem);
  }
}

/** Nodes in seq order from a refreshed state (shared: do not mutate). */
export function orderedNodes(state: HistoryState): readonly SessionNode[] {
  state.ordered ??= [...state.bySeq.values()].sort((a, b) => a.seq - b.seq);
  return state.ordered;
}

/**
 * Keeps the seq-ordered list in step with one remembered node without
 * re-sorting: appends go on the end, updates replace in place (binary search).
 * Returns false when the list must be rebuilt instead.
 */
function keepOrdered(ordered: SessionNode[], node: SessionNode, previous: SessionNode | undefined): boolean {
  const last = ordered[ordered.length - 1];
  if (!previous) {
    if (last && node.seq <= last.seq) return false;
    ordered.push(node);
    return true;
  }
  if (previous.seq !== node.seq) return false;
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((ordered[middle] as SessionNode).seq < node.seq) low = middle + 1;
    else high = middle;
  }
  if (ordered[low]?.id !== node.id) return false;
  ordered[low] = node;
  return true;
}

/**
 * The usage buckets of a refreshed state's nodes (usageBuckets over orderedNodes), brought up to date from the
 * nodes changed since the last call: a turn's end pays for the turn's nodes, not the session's.
 */
export function sessionUsageBuckets(state: HistoryState): UsageBucket[] {
  if (!state.usage?.usable) state.usage = UsageTally.of(orderedNodes(state));
  return state.usage.buckets(state.bySeq);
}

/** Problems (unreadable node files) from a refreshed state. */
export function historyProblems(state: HistoryState): HistoryProblem[] {
  return [...state.problems.values()].sort((a, b) => a.path.localeCompare(b.path));
}

export type { HistoryState };

function freezeNode(node: SessionNode): SessionNode {
  Object.freeze(node.metadata);
  Object.freeze(node.reads);
  return Object.freeze(node);
}

/**
 * Reads a node file without following a symbolic link: a link in history/
 * would show the model a file from outside the sessions root as a node.
 */
export function readNodeFile(path: string): string {
  // O_NOFOLLOW and O_NONBLOCK, regular files only (safe-open.ts): a FIFO named like a node would hang the reader.
  return readRegularFile(path, "utf8");
}

/** Why readNodeFile failed, in words. */
export function unreadableReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ELOOP")
    return "is a symbolic link (not read: OpenProgram does not follow links inside the sessions root)";
  if (error instanceof NotRegularFileError) return `is a ${error.kind}, not a regular file (not read)`;
  return `cannot be read (${code ?? (error as Error).message})`;
}

const NOTHING_HELD: ReadonlySet<FileWrite> = new Set();

/** Whether the session's log is fdatasynced on this thread (appendWal's `syncHere`): while it is all we write. */
function syncLogHere(paths: SessionPaths): boolean {
  return walSyncPlacement.onLoopThread && soleWriterHere(paths.lock);
}

function textOf(file: FileWrite): string {
  return typeof file.data === "string" ? file.data : Buffer.from(file.data).toString("utf8");
}

/** Opens for appending, creating it if needed, never through a symbolic link. */
const APPEND_NO_FOLLOW = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/** Appends a line per file name in one write; O_APPEND writes of short lines are atomic, so writers never interleave. */
function appendJournalLines(journalPath: string, fileNames: readonly string[]): boolean {
  try {
    const fd = openSync(journalPath, APPEND_NO_FOLLOW, FILE_MODE);
    try {
      writeSync(fd, fileNames.map((name) => `${name}\n`).join(""));
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}

/** CRC-32 of a file's bytes, or null when there is none (or it cannot be read as a regular file). */
function crcOfFileOrNull(path: string): number | null {
  try {
    return crc32(readRegularFile(path));
  } catch {
    return null;
  }
}

/** mtime of history/, recreating the directory if a damaged session lost it. */
function historyMtime(paths: SessionPaths): bigint {
  const stat = statSync(paths.history, { bigint: true, throwIfNoEntry: false });
  if (stat) return stat.mtimeNs;
  try {
    mkdirSync(paths.history, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    throw new StoreWriteError(paths.history, error);
  }
  return statSync(paths.history, { bigint: true }).mtimeNs;
}

function sizeOrZero(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
