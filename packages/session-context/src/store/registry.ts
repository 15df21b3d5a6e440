import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { isValidSessionId } from "../ids.js";
import { dumpsPythonIndented } from "../json/python-json.js";
import { FILE_MODE, tempPathFor, writeFileAtomic } from "./atomic-file.js";
import { acquireLockFileSync, releaseOwnLockSync, withLock, type AcquiredLock } from "./file-lock.js";
import { flushOnExit } from "./registry-exit.js";
import { INDEX_FILE, REGISTRY_LOCK_FILE } from "./layout.js";
import { readMetaFile } from "./meta-file.js";
import { RegistryText } from "./registry-text.js";
import type { SessionMeta, SessionRecord } from "./types.js";
import { readRegularFile, readRegularFileAsync } from "./safe-open.js";

type Entries = Record<string, SessionRecord>;

/** A change to one session's entry waiting for the next flush. */
export interface QueuedChange {
  /** The session's folder: a session deleted meanwhile (its folder moved aside) gets no entry back. */
  sessionDir: string;
  /** The entry for a session the registry does not list yet (built from its meta.json). */
  fallback: () => SessionRecord;
  change: (current: SessionRecord) => SessionRecord;
}

const registries = new Map<string, SessionRegistry>();

/** Flushes wait at least this long, so that the changes of many turns share one write. */
const MIN_FLUSH_DELAY_MS = 20;
/** ...and at most this long: a Python process listing sessions sees a status at most about a second stale. */
const MAX_FLUSH_DELAY_MS = 1_000;
/** A flush may take at most about this share of the time (a big registry flushes less often, never slower turns). */
const FLUSH_DUTY = 8;

/** How long queued changes wait for their flush, given how long the last flush took. */
export function flushDelayMs(lastFlushMs: number): number {
  return Math.min(MAX_FLUSH_DELAY_MS, Math.max(MIN_FLUSH_DELAY_MS, lastFlushMs * FLUSH_DUTY));
}

/** The registry lock is held for one durable write; one older than this was left by a killed process. */
const REGISTRY_LOCK = { staleMs: 10_000, timeoutMs: 30_000 };

/** Emits one process warning per distinct problem, naming the file. */
export function reportStoreProblem(message: string): void {
  process.emitWarning(message, { code: "OPENPROGRAM_STORE" });
}

/**
 * `<root>/index.json`: id -> registry entry, written by both stores.
 *
 * The registry is a cache: each session's meta.json and history are the
 * truth, and the registry is rebuilt from them when it is lost. A turn's
 * status changes are queued (`queue`) and written together shortly after
 * (one read-modify-write under the registry lock per flush, however many
 * turns of however many sessions changed meanwhile), so no turn waits for
 * the registry or for the other sessions' turns; this process's reads see
 * the queued changes at once, other processes within a second. Rare changes
 * a user makes (title, pin, archive, delete) go through `update`, which
 * writes at once and takes the queued changes along.
 *
 * Reads reuse the parsed registry while the file's bytes are unchanged (a
 * byte compare is far cheaper than parsing a thousand entries). Writes are
 * read-modify-write under a lock so processes never lose each other's updates.
 * A missing or unparsable registry is rebuilt from the sessions' meta.json.
 */
export class SessionRegistry {
  private readonly indexPath: string;
  private readonly lockPath: string;
  private cached: { raw: Buffer; entries: Entries } | null = null;
  private pending = new Map<string, QueuedChange[]>();
  private flushTimer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private lastFlushMs = 0;
  private inFlight: Map<string, QueuedChange[]> | null = null;
  /** Counts queued changes leaving the queue or the flush in flight (see readFile). */
  private handOffs = 0;
  private reportedFailure = false;
  /** index.json's text by entry, for flushes (see RegistryText). */
  private readonly text = new RegistryText();

  private constructor(private readonly root: string) {
    this.indexPath = join(root, INDEX_FILE);
    this.lockPath = join(root, REGISTRY_LOCK_FILE);
  }

  /** The one registry of this root in this process: every store instance on it sees the same queued changes. */
  static of(root: string): SessionRegistry {
    let registry = registries.get(root);
    if (!registry) {
      registry = new SessionRegistry(root);
      registries.set(root, registry);
    }
    return registry;
  }

  /** The current entries, with this process's queued changes applied. Treat the result as read-only. */
  async read(): Promise<Entries> {
    const entries = await this.readFile();
    if (this.pending.size === 0 && this.inFlight === null) return entries;
    const overlaid = { ...entries };
    // Changes a flush is writing now are in neither the file nor the queue: applied first, then the queue.
    if (this.inFlight) applyQueued(overlaid, this.inFlight);
    applyQueued(overlaid, this.pending);
    return overlaid;
  }

  /** Queues a change to one entry; it reaches index.json with the next flush (at most about a second later). */
  queue(sessionId: string, change: QueuedChange): void {
    let changes = this.pending.get(sessionId);
    if (!changes) {
      changes = [];
      this.pending.set(sessionId, changes);
    }
    changes.push(change);
    this.scheduleFlush();
    flushOnExit(this);
  }

  /** True while queued changes wait for a flush. */
  hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** Writes every queued change now (resolves once they are in index.json). */
  async flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    while (this.flushing) await this.flushing;
    if (this.pending.size === 0) return;
    // The whole store was removed (a test's temp dir, a deleted home): nothing is left to list.
    if (!existsSync(this.root)) {
      this.pending = new Map();
      this.handOffs += 1;
      return;
    }
    const started = performance.now();
    let failed = false;
    this.flushing = this.write(null)
      .then(
        () => undefined,
        (error: unknown) => {
          // The store was removed while this flush wrote (the check above came just before): as there.
          if (!existsSync(this.root)) {
            this.pending = new Map();
            this.handOffs += 1;
            return;
          }
          // A read-only or full disk: the changes stay queued and are tried again a second later (the cache is
          // rebuilt from meta.json anyway); said once.
          failed = true;
          if (!this.reportedFailure)
            reportStoreProblem(`Could not update ${this.indexPath}: ${(error as Error).message}`);
          this.reportedFailure = true;
        },
      )
      .finally(() => {
        this.lastFlushMs = failed ? MAX_FLUSH_DELAY_MS : performance.now() - started;
        this.flushing = null;
      });
    await this.flushing;
  }

  /**
   * Resolves once the session's queued changes are in index.json: written by a
   * flush already under way when that flush carries them, else by the next one,
   * which this call starts only when no other caller has. The flush writes every
   * queued change, so the turns of many sessions ending together share one write
   * (a caller whose change another flush carried starts none of its own).
   */
  async flushSession(sessionId: string): Promise<void> {
    for (;;) {
      if (this.flushing === null) {
        if (!this.pending.has(sessionId)) return;
        // Takes the change: written, or (a failed write) queued again and retried by the timer.
        await this.flush();
        return;
      }
      // A flush under way carries the change (it takes the queue once it holds the lock), or it failed and put
      // the change back, or the change came after it took the queue: then the next flush, this caller's or another's.
      await this.flushing;
      if (!this.pending.has(sessionId) && this.inFlight?.has(sessionId) !== true) return;
    }
  }

  /**
   * The last flush of an exiting process, synchronously (no event loop is
   * left): best effort, since whatever it cannot write is rebuilt or
   * recovered from the sessions' own files.
   */
  flushSync(): void {
    if (this.pending.size === 0) return;
    let lock: AcquiredLock | null;
    try {
      lock = acquireLockFileSync(this.lockPath, { staleMs: REGISTRY_LOCK.staleMs, timeoutMs: 1_000 });
    } catch {
      // The root is gone (removed with its sessions) or read-only: nothing to write to.
      return;
    }
    if (!lock) {
      // Said, not silent: the session's status in index.json stays as it was until its next turn or
      // `openprogram sessions doctor`. Synchronous, as nothing asynchronous runs after "exit".
      process.stderr.write(
        `openprogram: could not update ${this.indexPath} on exit: another process held ${this.lockPath}; ` +
          "the next turn of the session or `openprogram sessions doctor` brings it up to date.\n",
      );
      return;
    }
    try {
      const raw = readOrNull(this.indexPath);
      const entries = (raw === null ? null : parseEntries(raw)) ?? this.rebuildFromMeta();
      applyQueued(entries, this.pending);
      this.pending = new Map();
      this.handOffs += 1;
      writeFileAtomicSync(this.indexPath, dumpsPythonIndented(entries));
    } catch {
      // see above: best effort
    } finally {
      lock.release();
    }
  }

  /**
   * The flush of a process that is exiting. When this process's own asynchronous flush holds
   * the registry lock, that flush will never finish (no event loop is left): its changes and
   * the queued ones are written here under the lock it holds, which is then released.
   * Otherwise the same as flushSync.
   */
  flushAtExit(): void {
    const orphaned = this.inFlight;
    if (orphaned === null) {
      this.flushSync();
      return;
    }
    try {
      const raw = readOrNull(this.indexPath);
      const entries = (raw === null ? null : parseEntries(raw)) ?? this.rebuildFromMeta();
      applyQueued(entries, orphaned);
      applyQueued(entries, this.pending);
      this.pending = new Map();
      this.handOffs += 1;
      writeFileAtomicSync(this.indexPath, dumpsPythonIndented(entries));
    } catch {
      // best effort, as in flushSync
    } finally {
      releaseOwnLockSync(this.lockPath);
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    const delay = flushDelayMs(this.lastFlushMs);
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush().then(() => {
        if (this.pending.size > 0) this.scheduleFlush();
      });
    }, delay);
    // An exiting process flushes in its exit hook (registry-exit.ts) instead of being kept alive for the timer.
    this.flushTimer.unref();
  }

  /** The entries of index.json as it is on disk (rebuilt from meta.json files when missing or unparsable). */
  private async readFile(): Promise<Entries> {
    // Off the event loop's thread: a listing on a server reads the whole index.json. A change of this process that
    // left the queue for the file meanwhile is in neither the queue nor maybe the bytes read: then read again, at once.
    const handOffs = this.handOffs;
    let raw = await readOrNullAsync(this.indexPath);
    if (this.handOffs !== handOffs) raw = readOrNull(this.indexPath);
    if (raw !== null && this.cached?.raw.equals(raw)) return this.cached.entries;
    const entries = raw === null ? null : parseEntries(raw);
    if (entries !== null) {
      this.cached = { raw, entries } as { raw: Buffer; entries: Entries };
      return entries;
    }
    if (!existsSync(this.root)) return {};
    try {
      return await this.update(() => undefined);
    } catch (error) {
      // A read-only store still lists its sessions; the rebuilt registry is just not saved.
      if (!(error instanceof StoreWriteError)) throw error;
      return this.rebuildFromMeta();
    }
  }

  /**
   * Applies the queued changes, then `mutate`, to a fresh copy under the
   * registry lock and writes it atomically. The queued changes go back in the
   * queue if the write fails.
   */
  async update(mutate: (entries: Entries) => void): Promise<Entries> {
    return this.write(mutate);
  }

  /**
   * update() for a change, or (mutate null) a flush of the queued changes.
   * A flush starts from the entries this process wrote last when index.json
   * still holds exactly those bytes (one read and compare instead of parsing
   * every session's entry), and re-serialises only the entries that changed:
   * with many sessions in the store, a flush costs about what it writes, not
   * a parse and a serialisation of the whole registry. A change (`mutate`,
   * which may edit entries in place) always starts from a fresh parse.
   */
  private async write(mutate: ((entries: Entries) => void) | null): Promise<Entries> {
    return withLock(
      this.lockPath,
      async () => {
        const raw = readOrNull(this.indexPath);
        const reusable = mutate === null && raw !== null && this.cached?.raw.equals(raw);
        let entries = reusable
          ? { ...(this.cached as { entries: Entries }).entries }
          : raw === null
            ? null
            : parseEntries(raw);
        if (entries === null) {
          if (raw !== null) this.keepCorruptCopy();
          entries = this.rebuildFromMeta();
        }
        const taken = this.pending;
        this.pending = new Map();
        this.handOffs += 1;
        this.inFlight = taken;
        try {
          applyQueued(entries, taken);
          if (mutate) mutate(entries);
          const text = mutate ? dumpsPythonIndented(entries) : this.text.render(entries);
          await writeFileAtomic(this.indexPath, text);
          this.cached = { raw: Buffer.from(text), entries };
          return entries;
        } catch (error) {
          for (const [sessionId, changes] of taken)
            this.pending.set(sessionId, [...changes, ...(this.pending.get(sessionId) ?? [])]);
          if (this.pending.size > 0) this.scheduleFlush();
          throw error;
        } finally {
          this.inFlight = null;
          this.handOffs += 1;
        }
      },
      REGISTRY_LOCK,
    );
  }

  private keepCorruptCopy(): void {
    const aside = `${this.indexPath}.corrupt-${Date.now()}`;
    try {
      renameSync(this.indexPath, aside);
      reportStoreProblem(
        `${this.indexPath} was not valid JSON; kept it as ${aside} and rebuilt the registry from meta.json files.`,
      );
    } catch {
      // already moved by another process
    }
  }

  /** Rebuilds entries from every `<id>/meta.json`; status flags take their defaults. */
  private rebuildFromMeta(): Entries {
    const entries: Entries = {};
    let names: string[];
    try {
      names = readdirSync(this.root);
    } catch {
      return entries;
    }
    for (const name of names.sort()) {
      if (!isValidSessionId(name)) continue;
      const metaPath = join(this.root, name, "meta.json");
      const reading = readMetaFile(metaPath);
      if (reading.state === "missing") continue;
      if (reading.state === "ok") {
        entries[name] = registryEntryFromMeta({ ...reading.meta, id: name });
        continue;
      }
      // Listed as damaged rather than dropped: `sessions list` must show it, and doctor --fix repairs it.
      reportStoreProblem(
        `${metaPath} ${reading.reason}; session '${name}' is listed as damaged. Run \`openprogram sessions doctor ${name} --fix\`.`,
      );
      entries[name] = damagedEntry(join(this.root, name), name);
    }
    return entries;
  }
}

/** Applies queued changes to entries; a session whose meta.json is gone gets no entry back. */
function applyQueued(entries: Entries, pending: ReadonlyMap<string, readonly QueuedChange[]>): void {
  for (const [sessionId, changes] of pending) {
    const first = changes[0];
    if (!first || !existsSync(first.sessionDir)) continue;
    let current: SessionRecord;
    try {
      current = entries[sessionId] ?? first.fallback();
    } catch {
      continue;
    }
    for (const queued of changes) current = queued.change(current);
    entries[sessionId] = current;
  }
}

/** Temp file, fsync, rename: for the exit hook, which cannot wait for the thread pool. */
function writeFileAtomicSync(path: string, text: string): void {
  const temporary = tempPathFor(path);
  const fd = openSync(temporary, "wx", FILE_MODE);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temporary, path);
  } catch (error) {
    unlinkSync(temporary);
    throw error;
  }
}

/** A registry entry with the Python store's field set and defaults. */
export function registryEntryFromMeta(meta: SessionMeta, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: meta.id,
    status: "idle",
    pinned: false,
    // Archiving writes meta.json too (as Python's set_archived does), so a rebuilt registry keeps it.
    archived: meta.archived === true,
    unread: false,
    agent_id: meta.agent_id ?? "main",
    title: meta.title ?? "",
    source: meta.source ?? "",
    created_at: meta.created_at,
    updated_at: meta.updated_at ?? meta.created_at,
    channel: null,
    peer_display: null,
    peer_id: null,
    ...overrides,
  };
}

/** The registry entry of a session whose meta.json cannot be read: its times from the directory, status "damaged". */
export function damagedEntry(directory: string, sessionId: string): SessionRecord {
  const seconds = (statSync(directory, { throwIfNoEntry: false })?.mtimeMs ?? 0) / 1000;
  return registryEntryFromMeta(
    {
      id: sessionId,
      agent_id: "main",
      title: "",
      source: "",
      created_at: seconds,
      updated_at: seconds,
      project_id: "",
      head_id: null,
    },
    { status: "damaged" },
  );
}

/** What reading `<root>/index.json` found, for checks that must tell a missing registry from a corrupt one. */
export type RegistryReading =
  | { state: "ok"; entries: Entries }
  | { state: "missing" }
  | { state: "corrupt"; reason: string };

/** Reads the registry file as it is on disk, without rebuilding or caching anything. */
export function readRegistryFile(root: string): RegistryReading {
  const raw = readOrNull(join(root, INDEX_FILE));
  if (raw === null) return { state: "missing" };
  let value: unknown;
  try {
    value = JSON.parse(raw.toString("utf8"));
  } catch {
    return { state: "corrupt", reason: "is not valid JSON" };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { state: "corrupt", reason: "is not a JSON object" };
  }
  return { state: "ok", entries: value as Entries };
}

function readOrNull(path: string): Buffer | null {
  try {
    return readRegularFile(path);
  } catch {
    return null;
  }
}

async function readOrNullAsync(path: string): Promise<Buffer | null> {
  try {
    return await readRegularFileAsync(path);
  } catch {
    return null;
  }
}

function parseEntries(raw: Buffer): Entries | null {
  try {
    const value: unknown = JSON.parse(raw.toString("utf8"));
    if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
    return value as Entries;
  } catch {
    return null;
  }
}
