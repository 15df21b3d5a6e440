import { existsSync, lstatSync, type Stats } from "node:fs";
import { readdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  CorruptMetaError,
  InvalidInputError,
  NotASessionError,
  SessionBusyError,
  SessionExistsError,
  SessionNotFoundError,
  StoreWriteError,
} from "../errors.js";
import { isValidSessionId, randomHex } from "../ids.js";
import type { SessionPaths } from "./layout.js";
import { readMetaFile } from "./meta-file.js";
import { registryEntryFromMeta } from "./registry.js";
import { assertSafeToWrite, lstatOrNull, refuseExisting } from "./safe-paths.js";
import type {
  CreateSessionOptions,
  ListSessionsOptions,
  OpenSessionOptions,
  SessionPatch,
} from "./session-db-options.js";
import { tryCreateSession } from "./session-creation.js";
import type { StoreState } from "./store-state.js";
import { liveTurnLeases } from "./turn-lease.js";
import type { SessionRecord } from "./types.js";

/** Registry fields that belong to meta.json as well, and stay in step there. */
const META_FIELDS = new Set(["title", "agent_id", "source"]);
/** How many minted ids to try when each one's name is taken by something that is not a session. */
const MINT_ATTEMPTS = 8;

/**
 * The catalogue of sessions: which sessions exist, their registry entries
 * (index.json, a cache of the sessions' own meta.json files), and creating,
 * entering, listing, changing and deleting them. See SessionDB for each method.
 */
export class SessionCatalogue {
  constructor(private readonly state: StoreState) {}

  async openSession(sessionId: string, options: OpenSessionOptions): Promise<boolean> {
    const paths = this.state.paths(sessionId);
    const metaStat = lstatOrNull(paths.meta);
    if (metaStat) {
      await this.assertUsable(paths, metaStat);
      return false;
    }
    const { create = true, ...fields } = options;
    if (!create) throw new SessionNotFoundError(sessionId);
    return (await tryCreateSession(this.state, { ...fields, id: sessionId })) !== null;
  }

  async createSession(options: CreateSessionOptions): Promise<SessionRecord> {
    for (let attempt = 1; ; attempt++) {
      try {
        const created = await tryCreateSession(this.state, options);
        if (created) return created;
        if (options.id !== undefined) throw new SessionExistsError(options.id);
      } catch (error) {
        // A minted name taken by a stray file: mint another (a few times; then the root is in a strange state).
        if (options.id !== undefined || !(error instanceof NotASessionError) || attempt >= MINT_ATTEMPTS) throw error;
      }
    }
  }

  async getSession(sessionId: string): Promise<SessionRecord | null> {
    const paths = this.state.paths(sessionId);
    const entries = await this.state.registry.read();
    const entry = entries[sessionId];
    if (entry) return { ...entry };
    if (!existsSync(paths.meta)) return null;
    // On disk but missing from the registry (written by a crashed create): add it back.
    const rebuilt = registryEntryFromMeta(this.state.readMetaSync(sessionId));
    await this.state.registry.update((all) => {
      if (existsSync(paths.meta)) all[sessionId] ??= rebuilt;
    });
    return { ...rebuilt };
  }

  async listSessions(options: ListSessionsOptions): Promise<SessionRecord[]> {
    const offset = Math.max(0, options.offset ?? 0);
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    let entries = await this.state.registry.read();
    if (await this.addUnlisted(entries)) entries = await this.state.registry.read();
    const all = Object.values(entries).filter((entry) => options.includeArchived || !entry.archived);
    all.sort((a, b) => (b.updated_at ?? 0) - (a.updated_at ?? 0) || a.id.localeCompare(b.id));
    return all.slice(offset, offset + limit).map((entry) => ({ ...entry }));
  }

  async updateSession(sessionId: string, patch: SessionPatch): Promise<SessionRecord> {
    const paths = this.state.paths(sessionId);
    if (!existsSync(paths.meta)) throw new SessionNotFoundError(sessionId);
    if ("id" in patch) throw new InvalidInputError("updateSession cannot change a session's id.");
    const metaPatch = Object.fromEntries(Object.entries(patch).filter(([key]) => META_FIELDS.has(key)));
    if (Object.keys(metaPatch).length > 0)
      await this.state.withSessionLock(sessionId, () => this.state.writeMeta(sessionId, metaPatch));
    return { ...(await this.state.updateEntry(sessionId, (current) => ({ ...current, ...patch, id: sessionId }))) };
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    const paths = this.state.paths(sessionId);
    // Only a session is ever removed: a stray file or folder under a session's name is refused, never deleted.
    const stat = lstatSync(paths.dir, { throwIfNoEntry: false });
    if (stat && (!stat.isDirectory() || (!existsSync(paths.meta) && !existsSync(paths.history)))) {
      throw refuseExisting(paths);
    }
    if (existsSync(paths.dir)) {
      const aside = await this.state.withSessionLock(sessionId, async () => {
        if (liveTurnLeases(paths).length > 0)
          throw new SessionBusyError(
            sessionId,
            "it is running a turn; stop it or wait for it to end, then delete the session",
          );
        // Moved aside first (one rename, off the event loop's thread): from here on no reader or writer finds the
        // session, so no late write can bring its registry entry back. Ids never start with ".", so the aside name is
        // never a session.
        const aside = join(this.state.root, `.deleted-${sessionId}-${randomHex(8)}`);
        try {
          await rename(paths.dir, aside);
        } catch (error) {
          throw new StoreWriteError(paths.dir, error);
        }
        this.state.forgetSession(sessionId);
        await this.removeEntryIfGone(sessionId, paths);
        return aside;
      });
      // Off the event loop and outside the lock: a server deleting a long session keeps answering meanwhile.
      await rm(aside, { recursive: true, force: true });
      return true;
    }
    const inRegistry = await this.removeEntryIfGone(sessionId, paths);
    this.state.forgetSession(sessionId);
    return inRegistry;
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
    if (this.state.usableSessions.get(paths.sessionId) === key) return;
    assertSafeToWrite(paths, [paths.context, paths.workdir, paths.turns]);
    try {
      this.state.readMetaSync(paths.sessionId);
    } catch (error) {
      if (error instanceof CorruptMetaError) await this.markDamaged(paths.sessionId);
      throw error;
    }
    this.state.noteUsable(paths.sessionId, key);
  }

  private async markDamaged(sessionId: string): Promise<void> {
    try {
      await this.state.registry.update((entries) => {
        const current = entries[sessionId];
        if (current && current.status !== "damaged") entries[sessionId] = { ...current, status: "damaged" };
      });
    } catch (error) {
      // A read-only store cannot record it; the caller still gets the CorruptMetaError.
      if (!(error instanceof StoreWriteError)) throw error;
    }
  }

  /**
   * Queues a registry entry for each session on disk that the registry does
   * not list (its creator was killed before the registry flush: the registry
   * is a cache of the sessions' own files). One readdir of the root, done by
   * listings, which read every entry anyway. True when it added any.
   */
  private async addUnlisted(entries: Readonly<Record<string, SessionRecord>>): Promise<boolean> {
    let added = false;
    let names: string[];
    try {
      // Off the event loop's thread: a root holds thousands of sessions, and a server lists them often.
      names = await readdir(this.state.root);
    } catch {
      return false;
    }
    for (const name of names) {
      if (name in entries || !isValidSessionId(name)) continue;
      const reading = readMetaFile(join(this.state.root, name, "meta.json"));
      if (reading.state !== "ok") continue;
      const entry = registryEntryFromMeta({ ...reading.meta, id: name });
      this.state.queueEntry(
        name,
        (current) => current,
        () => entry,
      );
      added = true;
    }
    return added;
  }

  /** Drops the registry entry unless a session (created again meanwhile) is on disk; true when there was one. */
  private async removeEntryIfGone(sessionId: string, paths: SessionPaths): Promise<boolean> {
    let removed = false;
    await this.state.registry.update((entries) => {
      if (!(sessionId in entries) || existsSync(paths.meta)) return;
      delete entries[sessionId];
      removed = true;
    });
    return removed;
  }
}
