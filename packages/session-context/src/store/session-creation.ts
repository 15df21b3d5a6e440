import { existsSync, rmSync } from "node:fs";
import { rename } from "node:fs/promises";
import { join } from "node:path";
import { InvalidInputError, OpenProgramError, StoreWriteError } from "../errors.js";
import { assertValidIdPrefix, assertValidSessionId, mintPrefixedId, randomHex } from "../ids.js";
import { dumpsPython } from "../json/python-json.js";
import { nowSeconds } from "../time/now-seconds.js";
import { fsyncPath } from "./fsync-path.js";
import { rememberNewRepository } from "./git-repo.js";
import { CREATING_PREFIX, type SessionPaths } from "./layout.js";
import { registryEntryFromMeta } from "./registry.js";
import { lstatOrNull, refuseExisting } from "./safe-paths.js";
import type { CreateSessionOptions } from "./session-db-options.js";
import { writeSessionFolder } from "./session-folder.js";
import type { StoreState } from "./store-state.js";
import type { SessionMeta, SessionRecord } from "./types.js";

/**
 * Creates the session, or resolves to null when another caller created it
 * first. The session is built whole in a hidden folder and renamed into
 * place, so the only thing that can already be at its path is a session (then
 * null) or something that is not ours (then NotASessionError): nothing is
 * ever taken over, and nothing is removed but the hidden folder this call made.
 */
export async function tryCreateSession(
  state: StoreState,
  options: CreateSessionOptions,
): Promise<SessionRecord | null> {
  if (options.idPrefix !== undefined) assertValidIdPrefix(options.idPrefix);
  const sessionId = options.id ?? mintPrefixedId(options.idPrefix ?? "session");
  assertValidSessionId(sessionId);
  if (options.extra !== undefined && (options.extra === null || typeof options.extra !== "object")) {
    throw new InvalidInputError("createSession: extra must be an object of additional meta.json fields.");
  }
  const paths = state.paths(sessionId);
  state.ensureRoot();
  if (sessionAt(paths)) return null;
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
  const building = join(state.root, `${CREATING_PREFIX}${sessionId}-${randomHex(8)}`);
  try {
    await writeSessionFolder(building, dumpsPython(meta), options.forTurn === true);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error instanceof StoreWriteError ? error : new StoreWriteError(building, error);
  }
  let renamed = false;
  try {
    // Checked once more just before the rename: rename(2) would replace an empty directory that appeared meanwhile.
    if (sessionAt(paths)) return null;
    await rename(building, paths.dir);
    renamed = true;
  } catch (error) {
    if (error instanceof OpenProgramError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOTEMPTY" && code !== "EEXIST" && code !== "ENOTDIR" && code !== "EISDIR") {
      throw new StoreWriteError(paths.dir, error);
    }
    // Something appeared at the name between the check and the rename: another creator's session, or not ours.
    if (sessionAt(paths)) return null;
    throw refuseExisting(paths);
  } finally {
    if (!renamed) rmSync(building, { recursive: true, force: true });
  }
  try {
    // The rename made durable (a created session survives a crash); the registry, a cache, follows shortly. Each
    // create flushes the root itself: concurrent fsyncs share the file system's journal commit, and queueing them
    // here behind one another was measured to halve the rate of new sessions under load; a group commit (creates
    // arriving during a flush share the next) cost 1.24x the CPU per create with 10 creating at once (issue 19).
    await fsyncPath(state.root);
  } catch (error) {
    // The session is complete on disk and may be in use already: it stays.
    throw error instanceof StoreWriteError ? error : new StoreWriteError(paths.dir, error);
  }
  // Made with the session: its first lock need not look for it, nor its first commit for its repository, nor its
  // next turn for a turn a crashed process left in it (none has run; one that runs later leaves a lease file, which
  // needsRecoveryCheck looks for).
  state.preparedState.add(paths.state);
  state.noteRecoveryChecked(sessionId);
  if (options.forTurn === true) rememberNewRepository(paths);
  const entry = registryEntryFromMeta(meta);
  state.queueEntry(
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
function sessionAt(paths: SessionPaths): boolean {
  const stat = lstatOrNull(paths.dir);
  if (!stat) return false;
  if (stat.isDirectory() && existsSync(paths.meta)) return true;
  throw refuseExisting(paths);
}
