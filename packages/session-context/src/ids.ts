import { randomBytes, randomFillSync } from "node:crypto";
import { InvalidSessionIdError } from "./errors.js";

/** Longest session id accepted; ids become directory names. */
export const MAX_SESSION_ID_LENGTH = 128;

const SESSION_ID_CHARACTERS = /^[A-Za-z0-9_.:-]+$/;

/**
 * Random bytes are drawn 4 KiB at a time and handed out in order, each byte
 * once: a turn mints some twenty names (node ids, temp files, object files,
 * lock tokens), and one `randomBytes` call per name was 2-4% of a server's
 * CPU per turn. The bytes are the same CSPRNG's.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let poolUsed = POOL_BYTES;

/** `length` random lowercase hex characters. */
export function randomHex(length: number): string {
  const bytes = Math.ceil(length / 2);
  if (bytes > POOL_BYTES) return randomBytes(bytes).toString("hex").slice(0, length);
  if (poolUsed + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  const hex = pool.toString("hex", poolUsed, poolUsed + bytes);
  poolUsed += bytes;
  return hex.length === length ? hex : hex.slice(0, length);
}

/** Node ids are 12 hex characters, as the Python store writes them. */
export function mintNodeId(): string {
  return randomHex(12);
}

/** `<prefix>_<10 hex>`: the shape of minted session and turn ids. */
export function mintPrefixedId(prefix: string): string {
  return `${prefix}_${randomHex(10)}`;
}

/** Minted turn ids: `turn_<10 hex>`. */
export function mintTurnId(): string {
  return mintPrefixedId("turn");
}

/**
 * Names the store itself keeps in the sessions root, beside the session
 * directories: the registry and its backups (`index.json.corrupt-<time>`,
 * Python's `index.json.tmp`). Compared case-insensitively, for file systems
 * that are. Every other file the store keeps there starts with '.'.
 */
function isStoreFileName(sessionId: string): boolean {
  const lower = sessionId.toLowerCase();
  return lower === "index.json" || lower.startsWith("index.json.");
}

/**
 * Refuses any session id that could escape the sessions root, name a hidden
 * directory, collide with the store's own files or read as a command-line
 * option, before a path is ever built from it.
 */
export function assertValidSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== "string") throw new InvalidSessionIdError(sessionId, "it is not a string");
  if (sessionId.length === 0) throw new InvalidSessionIdError(sessionId, "it is empty");
  if (sessionId.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidSessionIdError(
      sessionId,
      `it is ${sessionId.length} characters long (at most ${MAX_SESSION_ID_LENGTH})`,
    );
  }
  if (sessionId.includes("\0")) throw new InvalidSessionIdError(sessionId, "it contains a NUL character");
  if (sessionId.includes("/")) throw new InvalidSessionIdError(sessionId, "it contains '/'");
  if (sessionId.includes("\\")) throw new InvalidSessionIdError(sessionId, "it contains '\\'");
  if (sessionId.includes("..")) throw new InvalidSessionIdError(sessionId, "it contains '..'");
  if (sessionId.startsWith(".")) throw new InvalidSessionIdError(sessionId, "it starts with '.'");
  if (sessionId.startsWith("-")) {
    throw new InvalidSessionIdError(sessionId, "it starts with '-', so a command line would read it as an option");
  }
  if (isStoreFileName(sessionId)) {
    throw new InvalidSessionIdError(
      sessionId,
      "it is the name of the store's own registry file (or one of its copies)",
    );
  }
  if (!SESSION_ID_CHARACTERS.test(sessionId)) {
    throw new InvalidSessionIdError(
      sessionId,
      "it contains characters other than letters, digits, '_', '-', '.' and ':'",
    );
  }
}

/** True when `assertValidSessionId` would accept the id. */
export function isValidSessionId(sessionId: unknown): sessionId is string {
  try {
    assertValidSessionId(sessionId);
    return true;
  } catch {
    return false;
  }
}

/** Validates an id prefix the same way (a prefix becomes part of a directory name). */
export function assertValidIdPrefix(prefix: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,40}$/.test(prefix)) {
    throw new InvalidSessionIdError(`${prefix}_…`, "the id prefix must be 1-41 letters, digits, '_' or '-'");
  }
}
