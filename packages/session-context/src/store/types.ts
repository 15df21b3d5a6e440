/** Roles of DAG nodes, as the Python store writes them. */
export type NodeRole = "user" | "llm" | "code";

/** One node of a session's DAG: exactly the fields of a Python OpenProgram node file. */
export interface SessionNode {
  id: string;
  /** Unix seconds, float. */
  created_at: number;
  seq: number;
  role: NodeRole;
  name: string;
  input: unknown;
  output: unknown;
  /** Id of the call that made this node, or "" at top level. */
  caller: string;
  /** Previous node on the conversation branch ("ROOT" or null at the start), null when nested. */
  predecessor: string | null;
  /** Ids of the nodes rendered into the prompt that produced this node. */
  reads: string[];
  metadata: Record<string, unknown>;
}

/** What a caller supplies to append a node; the store assigns id, seq and (unless given) created_at. */
export interface NodeDraft {
  role: NodeRole;
  name?: string;
  input?: unknown;
  output?: unknown;
  caller?: string;
  predecessor?: string | null;
  reads?: string[];
  metadata?: Record<string, unknown>;
  /** Use this id instead of minting one (12 hex characters). */
  id?: string;
  /** Use this creation time (Unix seconds) instead of now: a compaction summary dates itself just before what it covers. */
  createdAt?: number;
}

/** A change to an existing node: `metadata` is merged, the other fields replaced. */
export interface NodePatch {
  output?: unknown;
  input?: unknown;
  reads?: string[];
  metadata?: Record<string, unknown>;
}

/** Where a new node goes relative to the session head. */
export interface AppendOptions {
  /**
   * Link the node to the current head (its predecessor becomes the head, or
   * `rootMarker` in an empty session) and make it the new head, atomically.
   */
  atHead?: boolean;
  /** Predecessor used by `atHead` in a session with no head yet: "ROOT" or null. */
  rootMarker?: "ROOT" | null;
  /**
   * With `atHead`: false links the node to the head but leaves head_id where
   * it is, for a reply still streaming; `updateNode(..., { advanceHead })`
   * moves the head once it completes. Default true.
   */
  moveHead?: boolean;
  /**
   * Without `atHead`: make this top-level node the head whatever its
   * predecessor (edit and resend starts a new branch beside the old one).
   */
  becomeHead?: boolean;
  /**
   * Resolve once the node's file is in place and logged (session-wal.ts),
   * without waiting for the log's fdatasync: the session's next write made
   * without this option makes both durable, and the turn's end does for what
   * is left. A crash of the process loses nothing (the file is whole and
   * logged); a power cut before that next fdatasync can lose the write (the
   * node then reads as before, or is absent). For writes whose loss then is
   * harmless: a model request's `running` node (a request recorded running
   * is sent again on resume, as one never recorded), an agentic call's
   * `running` node and its result (a call whose result is lost runs again,
   * its model calls answered from the record), a reply whose tool calls are
   * recorded next.
   */
  deferNameSync?: boolean;
  /**
   * Log the node (durable as the write is) without putting its file in place yet: the session's next write of the
   * node puts it there, or HELD_FILE_DELAY_MS after this one, or the turn's commit (held-files.ts). For a node
   * replaced within milliseconds, as a plain tool's `running` node by its result: one file creation and one rename
   * instead of two each. This process reads the node at once; another process sees it once it is in place, and
   * after a crash the log's recovery puts it there.
   */
  holdFile?: boolean;
}

/** One write of a batch written at once (the core's writeNodes): an append or an update, with its options. */
export type NodeWrite =
  | { op: "append"; draft: NodeDraft; options?: AppendOptions }
  | { op: "update"; nodeId: string; patch: NodePatch; options?: UpdateOptions };

/** The update of a batch (a reply's record, ModelCall.completion). */
export type NodeUpdateWrite = Extract<NodeWrite, { op: "update" }>;

/** Options of `updateNode`. */
export interface UpdateOptions {
  /** Make the node the head if the head is still its predecessor (a reply appended with `moveHead: false`). */
  advanceHead?: boolean;
  /** As in AppendOptions. */
  deferNameSync?: boolean;
}

/** Session status as shown in the registry; "damaged": its meta.json cannot be read (see `sessions doctor`). */
export type SessionStatus = "idle" | "running" | "needs_input" | "failed" | "damaged";

/** One entry of `<root>/index.json`, the registry of sessions. */
export interface SessionRecord {
  id: string;
  status: SessionStatus | (string & {});
  pinned: boolean;
  archived: boolean;
  unread: boolean;
  agent_id: string;
  title: string;
  source: string;
  created_at: number;
  updated_at: number;
  preview?: string;
  [field: string]: unknown;
}

/** `<root>/<id>/meta.json`. */
export interface SessionMeta {
  id: string;
  agent_id: string;
  title: string;
  source: string;
  created_at: number;
  updated_at: number;
  project_id: string;
  head_id: string | null;
  [field: string]: unknown;
}

/** A node file that could not be read; reported, never silently dropped. */
export interface HistoryProblem {
  path: string;
  message: string;
}

/** Everything in a session's history directory. */
export interface SessionHistory {
  nodes: SessionNode[];
  problems: HistoryProblem[];
}

/** One commit of a session repository. */
export interface GitLogEntry {
  hash: string;
  date: string;
  message: string;
  author: string;
}
