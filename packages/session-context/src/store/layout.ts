import { join } from "node:path";
import { assertValidSessionId } from "../ids.js";
import type { NodeRole } from "./types.js";

/**
 * The on-disk layout shared with Python OpenProgram:
 * `<root>/index.json`, `<root>/<id>/{meta.json,history/,context/,workdir/.gitkeep,.git}`.
 * Our own bookkeeping (locks, the change journal, the write-ahead log, turn leases) lives in
 * `<root>/<id>/.state/`, which git ignores through `.git/info/exclude`.
 */
export const INDEX_FILE = "index.json";
export const REGISTRY_LOCK_FILE = ".index.lock";
/**
 * A session is built in `<root>/.creating-<id>-<hex>/` and renamed into place
 * whole, so no other process ever sees a half-made session directory. The
 * leading '.' keeps it out of every listing (no session id starts with '.').
 */
export const CREATING_PREFIX = ".creating-";

const ROLE_LETTERS: Record<NodeRole, string> = { user: "u", llm: "l", code: "c" };
const ROLE_BY_LETTER = new Map(Object.entries(ROLE_LETTERS).map(([role, letter]) => [letter, role as NodeRole]));
const NODE_FILE = /^(\d{4,})-([a-z])-([^/\\]+)\.json$/;

/** Paths of one session; the id is validated before any path is built. */
export class SessionPaths {
  readonly sessionId: string;
  readonly dir: string;
  readonly meta: string;
  readonly history: string;
  readonly context: string;
  readonly workdir: string;
  readonly gitkeep: string;
  readonly git: string;
  readonly state: string;
  readonly lock: string;
  readonly journal: string;
  /** The write-ahead log of the files a turn writes (session-wal.ts). */
  readonly wal: string;
  readonly turns: string;
  /** Empty files made ahead of a turn's writes (spare-files.ts). */
  readonly spare: string;

  constructor(root: string, sessionId: string) {
    assertValidSessionId(sessionId);
    this.sessionId = sessionId;
    this.dir = join(root, sessionId);
    this.meta = join(this.dir, "meta.json");
    this.history = join(this.dir, "history");
    this.context = join(this.dir, "context");
    this.workdir = join(this.dir, "workdir");
    this.gitkeep = join(this.workdir, ".gitkeep");
    this.git = join(this.dir, ".git");
    this.state = join(this.dir, ".state");
    this.lock = join(this.state, "lock");
    this.journal = join(this.state, "journal");
    this.wal = join(this.state, "wal");
    this.turns = join(this.state, "turns");
    this.spare = join(this.state, "spare");
  }
}

/** `<seq:4>-<role letter>-<nodeId>.json`, as Python's f"{seq:04d}-{role[0]}-{id}.json". */
export function nodeFileName(seq: number, role: NodeRole, nodeId: string): string {
  return `${String(seq).padStart(4, "0")}-${ROLE_LETTERS[role]}-${nodeId}.json`;
}

/** The seq (and the role its letter names, if any) encoded in a node file name, or null for anything else in history/. */
export function parseNodeFileName(fileName: string): { seq: number; nodeId: string; role: NodeRole | null } | null {
  const match = NODE_FILE.exec(fileName);
  if (!match) return null;
  return { seq: Number(match[1]), nodeId: match[3] as string, role: ROLE_BY_LETTER.get(match[2] as string) ?? null };
}

/** Lines git must never commit: our bookkeeping and in-flight temp files. */
export const GIT_EXCLUDES = ["/.state/", ".*.tmp-*"];
