import type { SessionPaths } from "../layout.js";
import type { SessionDB } from "../session-db.js";
import type { SessionMeta, SessionNode } from "../types.js";

/** What the doctor can find. */
export type FindingKind =
  | "registry_corrupt"
  | "registry_missing_entry"
  | "registry_orphan_entry"
  | "registry_mismatch"
  | "not_a_session"
  | "unsafe_path"
  | "missing_meta"
  | "corrupt_meta"
  | "corrupt_node"
  | "temp_leftover"
  | "duplicate_seq"
  | "seq_mismatch"
  | "seq_gap"
  | "dangling_head"
  | "missing_head"
  | "unfinished_node"
  | "stuck_status"
  | "git_damaged"
  | "unsafe_git_config"
  | "git_lock_leftover"
  | "uncommitted_tail"
  | "wal_restore"
  | "check_failed";

/** One problem, and what was done about it. */
export interface DoctorFinding {
  sessionId: string | null;
  kind: FindingKind;
  severity: "error" | "warning";
  message: string;
  path?: string;
  /** True when --fix repaired it. */
  fixed: boolean;
  /** What the repair did, or how to repair it by hand when it cannot be done safely. */
  remedy: string;
}

/** The doctor's verdict on a store. */
export interface DoctorReport {
  root: string;
  sessionsChecked: number;
  findings: DoctorFinding[];
  /** True when no error-severity finding is left unrepaired. */
  healthy: boolean;
}

/** A finding as a check reports it; the session and `fixed: false` are filled in. */
export type FindingDraft = Omit<DoctorFinding, "sessionId" | "fixed"> & { fixed?: boolean };

/** Records a finding for the session being checked and returns it, so the check can mark it fixed. */
export type AddFinding = (finding: FindingDraft) => DoctorFinding;

/** A node file that parsed, by its file name in history/. */
export interface NodeFileEntry {
  file: string;
  node: SessionNode;
}

/**
 * What the checks of one session share: read once, updated by each repair so
 * that later checks see the repaired state.
 */
export interface SessionScan {
  db: SessionDB;
  sessionId: string;
  paths: SessionPaths;
  /** Node files that parsed. */
  nodes: NodeFileEntry[];
  /** Node files that did not, with the reason. */
  corrupt: Array<{ file: string; reason: string }>;
  /** Temp files in history/ (names only). */
  temps: string[];
  /** Every node file's seq, readable or not: all count as taken. */
  takenSeqs: number[];
  /** meta.json as read (null when missing or corrupt, until a repair rebuilds it). */
  meta: SessionMeta | null;
  /** A turn is running in this session: it is checked but never repaired. */
  live: boolean;
  /** The repository's config is unsafe (checkGitConfig) or git cannot open it: the checks that run git skip it. */
  gitRefused?: boolean;
  /** Repairs are wanted and allowed. */
  canFix: boolean;
  add: AddFinding;
}

/** The checks of one session, each in its own file, run in order over one scan. */
export type SessionCheck = (scan: SessionScan) => Promise<void>;
