// @openprogram/session-context/store: the session store and the views over it: what
// `openprogram sessions ...`, the dispatcher's pages and the MCP server read and manage
// (sessions, nodes, branches, archiving, retention, gc, doctor). Programs reach the store
// through sessionContext; errors come from the root.

// The store
export { SessionDB } from "../store/session-db.js";
export type {
  CreateSessionOptions,
  ListSessionsOptions,
  OpenSessionOptions,
  SessionDBOptions,
  SessionPatch,
} from "../store/session-db-options.js";
export { walkBranch } from "../store/walk-branch.js";
export { SessionNodeWriter } from "../store/node-writer.js";
export { isUnfinished, nodeStatus, type NodeStatus } from "../store/node-status.js";
export { openStore } from "../store/open-store.js";
export { flushQueuedWrites } from "../store/registry-exit.js";
export { MAX_CACHED_HISTORY_BYTES } from "../store/history.js";
export { addOtherHostLiveness, isOtherHostProcessAlive, type OtherHostLiveness } from "../store/other-hosts.js";
export { defaultSessionsRoot, openProgramHome } from "../store/default-root.js";
export { assertValidSessionId, isValidSessionId, MAX_SESSION_ID_LENGTH, mintPrefixedId } from "../ids.js";
export type {
  AppendOptions,
  GitLogEntry,
  HistoryProblem,
  NodeDraft,
  NodePatch,
  NodeRole,
  SessionHistory,
  SessionMeta,
  SessionNode,
  SessionRecord,
  SessionStatus,
  UpdateOptions,
} from "../store/types.js";
export type { RecordedBlock } from "../content/content-blocks.js";

// Views over a store that compose its readers, and its checks
export {
  buildCallTree,
  checkStore,
  describeSession,
  doctorSessions,
  exportSession,
  sessionCallTree,
  type CallTreeNode,
  type ExportFormat,
  type SessionDetail,
  type StoreOption,
} from "../sessions/manage.js";
export { MESSAGE_TITLE_CHARS, PROGRAM_TITLE_CHARS, titleFromMessage, titleFromProgram } from "../sessions/titles.js";
export { failureLabel, failureLines, latestFailure, nodeFailure, type NodeFailure } from "../sessions/node-failure.js";
export { userFrames, type ErrorFrame, type RecordedError } from "../agentic/failure-record.js";
export { INTERRUPTED_STATUS, withLiveStatus, type LiveStatusOptions } from "../sessions/live-status.js";
export { describeModelCalls, type RecordedModelCall, type RecordedToolCall } from "../runtime/recorded-calls.js";
export { toolRecord, type ToolCallRecord, type ToolResultRecord } from "../tools/tool-record.js";
export type { DoctorFinding, DoctorReport, FindingKind } from "../store/doctor/index.js";
export type { HealthCheck, StoreHealth } from "../store/health.js";

// Branches, archiving and retention (Python OpenProgram's rules: PYTHON-COMPAT.md)
export {
  checkoutHead,
  listBranches,
  MAX_BRANCH_NAME_LENGTH,
  nameBranch,
  type BranchStoreOption,
  type BranchTip,
} from "../branches/branches.js";
export { branchTipRecord, type BranchTipRecord } from "../branches/branch-tip-record.js";
export { archiveSession, unarchiveSession } from "../sessions/archive.js";
export {
  PRUNE_RULES,
  pruneSessions,
  type PruneEntry,
  type PruneKeptReason,
  type PruneOptions,
  type PruneReason,
  type PruneReport,
  type PruneRules,
} from "../sessions/prune.js";
export { gcSessions, type GcEntry, type GcReport } from "../sessions/git-gc.js";
