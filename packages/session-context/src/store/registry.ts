import { existsSync, readdirSync, readFileSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { StoreWriteError } from "../errors.js";
import { isValidSessionId } from "../ids.js";
import { dumpsPythonIndented } from "../json/python-json.js";
import { writeFileAtomic } from "./atomic-file.js";
import { withLock } from "./file-lock.js";
import { INDEX_FILE, REGISTRY_LOCK_FILE } from "./layout.js";
import { readMetaFile } from "./meta-file.js";
import type { SessionMeta, SessionRecord } from "./types.js";

type Entries = Record<string, SessionRecord>;

/** The registry lock is held for one durable write; one older than this was left by a killed process. */
const REGISTRY_LOCK = { staleMs: 10_000, timeoutMs: 30_000 };

/** Emits one process warning per distinct problem, naming the file. */
export function reportStoreProblem(message: string): void {
  process.emitWarning(message, { code: "OPENPROGRAM_STORE" });
}

/**
 * `<root>/index.json`: id -> registry entry, written by both stores.
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

  constructor(private readonly root: string) {
    this.indexPath = join(root, INDEX_FILE);
    this.lockPath = join(root, REGISTRY_LOCK_FILE);
  }

  /** The current entries. Treat the result as read-only. */
  async read(): Promise<Entries> {
    const raw = readOrNull(this.indexPath);
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

  /** Applies `mutate` to a fresh copy under the registry lock and writes it atomically. */
  async update(mutate: (entries: Entries) => void): Promise<Entries> {
    return withLock(
      this.lockPath,
      async () => {
        const raw = readOrNull(this.indexPath);
        let entries = raw === null ? null : parseEntries(raw);
        if (entries === null) {
          if (raw !== null) this.keepCorruptCopy();
          entries = this.rebuildFromMeta();
        }
        mutate(entries);
        const text = dumpsPythonIndented(entries);
        await writeFileAtomic(this.indexPath, text);
        this.cached = { raw: Buffer.from(text), entries };
        return entries;
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
    return readFileSync(path);
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
