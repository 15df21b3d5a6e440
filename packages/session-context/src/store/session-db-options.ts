import type { SessionRecord, SessionStatus } from "./types.js";

/** Options of `new SessionDB()`. */
export interface SessionDBOptions {
  /** Sessions root; default `$OPENPROGRAM_HOME/sessions`. */
  root?: string;
}

/** What `createSession` accepts. */
export interface CreateSessionOptions {
  /** The id to use (SessionExistsError when it is taken); minted as `<idPrefix>_<10 hex>` when absent. */
  id?: string;
  idPrefix?: string;
  agentId?: string;
  source?: string;
  title?: string;
  /** Extra fields stored in meta.json, as the Python store's `**extra`. */
  extra?: Record<string, unknown>;
  /**
   * A turn starts in the new session at once: its git repository (with the "session init" commit, as the Python
   * store makes it at creation) and its turn-lease folder are made inside the folder renamed into place, instead of
   * each on its own at the first commit and lease. Default false: a session nobody writes to gets no repository.
   */
  forTurn?: boolean;
}

/** What `openSession` accepts: the fields of a session it creates, and whether it may create one. */
export interface OpenSessionOptions extends Omit<CreateSessionOptions, "id" | "idPrefix"> {
  /** False: a missing session is a SessionNotFoundError instead of being created. Default true. */
  create?: boolean;
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
