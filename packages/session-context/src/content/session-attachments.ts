import { join } from "node:path";
import type { ActiveContext } from "../context/types.js";
import { storeInternals } from "../store/internal.js";
import { AttachmentStore } from "./attachment-store.js";
import type { AttachmentSink } from "./resolve-content.js";

/** The attachments of the context's session (in its `workdir/attachments/`). */
export function sessionAttachments(context: ActiveContext): AttachmentStore {
  return new AttachmentStore(storeInternals(context.db).paths(context.sessionId).workdir);
}

/**
 * Where an exec's blocks are stored: the turn is begun first (a new session
 * is made then), and each save runs under the session's lock, so two writers
 * never race on the dedup index.
 */
export async function attachmentSink(context: ActiveContext): Promise<AttachmentSink> {
  await context.beginTurn();
  const internals = storeInternals(context.db);
  const workdir = internals.paths(context.sessionId).workdir;
  const store = new AttachmentStore(workdir);
  return {
    save: (bytes, name) => internals.withSessionLock(context.sessionId, () => store.save(bytes, name)),
    absolute: (path) => join(workdir, path),
  };
}
