// @openprogram/session-context: the public API. Entry files only re-export;
// the logic lives in the folders named for each responsibility.

export * from "./errors.js";
export type { ErrorCode, ErrorCodesOf } from "./error-code.js";
export { assertValidSessionId, isValidSessionId, MAX_SESSION_ID_LENGTH, mintPrefixedId } from "./ids.js";

// The session context
export { sessionContext } from "./context/session-context.js";
export type { SessionContextOptions, SessionHandle, CallFrame } from "./context/types.js";
export {
  type CurrentSession,
  currentAsker,
  currentCallId,
  currentRuntime,
  currentSession,
  currentSessionIfAny,
  currentSignal,
  currentTurnId,
  hasSessionContext,
} from "./context/accessors.js";
export {
  CARRIER_VARIABLES,
  contextCarrierEnv,
  readContextCarrier,
  traceparentFor,
  type ContextCarrier,
} from "./context/carrier.js";
export type {
  AskOutcome,
  CompactionEvent,
  CompactionReason,
  DeltaEvent,
  RetryEvent,
  NodeEvent,
  QuestionClosedEvent,
  QuestionEvent,
  SessionEvent,
  SessionEventSink,
  StatusEvent,
  ToolCallEvent,
  ToolResultEvent,
} from "./context/events.js";

// Agentic functions and asking the user
export {
  agenticFunction,
  isAgenticFunction,
  validateAgenticInput,
  type AgenticCallContext,
  type AgenticDeclaration,
  type AgenticFunction,
  type AgenticFunctionSpec,
  type ExposeMode,
} from "./agentic/agentic-function.js";
export type { JsonSchema } from "./agentic/input-schema.js";
export {
  resolveAgenticExport,
  type ResolveAgenticExportOptions,
  type ResolvedAgenticExport,
} from "./agentic/resolve-agentic-export.js";
export type { ProgramEntry } from "./agentic/program-entry.js";
export { askUser, type AskUserOptions } from "./ask/ask-user.js";

// Tools the model may call from runtime.exec
export {
  tool,
  isTool,
  type NeedsApproval,
  type Tool,
  type ToolArguments,
  type ToolExecuteOptions,
  type ToolSpec,
} from "./tools/tool.js";
export type { JsonSchemaObject } from "./tools/tool-input.js";
export type { ToolEntry } from "./tools/tool-entry.js";
export { DEFAULT_MAX_ITERATIONS } from "./tools/tool-loop.js";
export { toolRecord, type ToolCallRecord, type ToolResultRecord } from "./tools/tool-record.js";
export { MAX_CONCURRENT_TOOL_CALLS, REPEATED_FAILURE_LIMIT } from "./tools/run-tool-calls.js";
export type { AskRequest, AskResponse, Asker } from "./ask/types.js";
export {
  createScriptedAsker,
  readAnswersFile,
  type ReadAnswersOptions,
  type ScriptedAnswer,
  type ScriptedAsker,
} from "./ask/scripted-asker.js";
export { createTerminalAsker, type TerminalAskerOptions } from "./ask/terminal-asker.js";

// Reading what a user hands over (files, stdin) within a size limit, and results JSON cannot carry
export {
  DEFAULT_MAX_INPUT_BYTES,
  describeBytes,
  readTextFileCapped,
  type ReadCappedOptions,
} from "./input/read-capped.js";
export { unserialisableResult, type UnserialisableResult } from "./json/unserialisable.js";
export { assertNestingDepth, MAX_NESTING_DEPTH } from "./json/nesting-depth.js";

// The runtime and its providers
export { createRuntime, type ProviderRuntimeConfig } from "./runtime/create-runtime.js";
export { requireRuntime, resolveRuntime, type ResolveRuntimeOptions } from "./runtime/resolve-runtime.js";
export {
  configPath,
  DEFAULT_MODELS,
  findProjectConfig,
  LOCAL_OPENAI_SERVERS,
  PROJECT_CONFIG_FILE,
  resolveRuntimeConfig,
  type ConfigSources,
  type ProviderName,
  type ResolveConfigOptions,
  type ResolvedRuntimeConfig,
  type RuntimeConfig,
} from "./runtime/config.js";
export {
  listTrustedProjects,
  projectTrust,
  revokeProjectTrust,
  searchProjectConfig,
  trustedProjectsPath,
  trustProject,
  TRUSTED_PROJECTS_FILE,
  type FoundProjectConfig,
  type ProjectTrust,
  type SkippedProjectFile,
  type TrustedProject,
  type TrustedProjectStatus,
} from "./runtime/project-trust.js";
export { ModelRuntime, type RuntimeDefaults } from "./runtime/model-runtime.js";
export type { CompactionPort, WindowedPrompt } from "./runtime/compaction-port.js";
export { contextWindowPolicy, type ContextWindowPolicyOptions } from "./compaction/window-policy.js";
export { chat, type ChatOptions } from "./runtime/chat.js";
export { describeModelCalls, type RecordedModelCall, type RecordedToolCall } from "./runtime/recorded-calls.js";
export type { ExecOptions, Runtime } from "./runtime/types.js";
export type { RetryInfo } from "./runtime/request-attempts.js";
export type { ContentBlock, ExecContent, InlineData, RecordedBlock } from "./content/content-blocks.js";
export { MAX_ATTACHMENT_BYTES, MAX_TURN_ATTACHMENT_BYTES } from "./content/content-blocks.js";
export { OpenAIChatProvider, type OpenAIProviderOptions } from "./providers/openai.js";
export { AnthropicProvider, type AnthropicProviderOptions } from "./providers/anthropic.js";
export {
  ScriptedProvider,
  type RecordedRequest,
  type ScriptEntry,
  type ScriptedProviderOptions,
  type ScriptedToolCall,
} from "./providers/scripted.js";
export type {
  ChatMessage,
  CompleteOptions,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ReportedUsage,
  ToolCall,
  ToolChoice,
  ToolDefinition,
} from "./providers/types.js";

// The store
export {
  SessionDB,
  walkBranch,
  type CreateSessionOptions,
  type ListSessionsOptions,
  type OpenSessionOptions,
  type SessionDBOptions,
  type SessionPatch,
} from "./store/session-db.js";
export { SessionNodeWriter } from "./store/node-writer.js";
export { isUnfinished, nodeStatus, type NodeStatus } from "./store/node-status.js";
export { openStore } from "./store/open-store.js";
export { flushQueuedWrites } from "./store/registry-exit.js";
export { MAX_CACHED_HISTORY_BYTES } from "./store/history.js";
export { addOtherHostLiveness, isOtherHostProcessAlive, type OtherHostLiveness } from "./store/other-hosts.js";
export { defaultSessionsRoot, openProgramHome } from "./store/default-root.js";
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
} from "./store/types.js";

// Views over a store that compose its readers, and its checks (what `openprogram sessions ...` and the web use)
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
} from "./sessions/manage.js";
export { MESSAGE_TITLE_CHARS, PROGRAM_TITLE_CHARS, titleFromMessage, titleFromProgram } from "./sessions/titles.js";
export { failureLabel, failureLines, latestFailure, nodeFailure, type NodeFailure } from "./sessions/node-failure.js";
export { userFrames, type ErrorFrame, type RecordedError } from "./agentic/failure-record.js";
export { INTERRUPTED_STATUS, withLiveStatus, type LiveStatusOptions } from "./sessions/live-status.js";

// Branches, archiving and retention (Python OpenProgram's rules: PYTHON-COMPAT.md)
export {
  checkoutHead,
  listBranches,
  MAX_BRANCH_NAME_LENGTH,
  nameBranch,
  type BranchStoreOption,
  type BranchTip,
} from "./branches/branches.js";
export { archiveSession, unarchiveSession } from "./sessions/archive.js";
export {
  PRUNE_RULES,
  pruneSessions,
  type PruneEntry,
  type PruneKeptReason,
  type PruneOptions,
  type PruneReason,
  type PruneReport,
  type PruneRules,
} from "./sessions/prune.js";
export { gcSessions, type GcEntry, type GcReport } from "./sessions/git-gc.js";

export type { DoctorFinding, DoctorReport, FindingKind } from "./store/doctor/index.js";
export type { HealthCheck, StoreHealth } from "./store/health.js";

// Token usage and cost (`openprogram sessions usage`, `sessions show`, the web page)
export { recordedSeconds, wallTimeAcrossStore, type StoreWallTime } from "./usage/wall-time.js";
export {
  usageAcrossStore,
  type StoreUsage,
  type StoreUsageOptions,
  type UsageGrouping,
  type UsageRow,
} from "./usage/store-usage.js";
export { describeSessionUsage, type SessionUsage, type TurnUsage } from "./usage/session-usage.js";
export { llmNodeUsage, UNKNOWN_MODEL, type LlmCallUsage } from "./usage/llm-usage.js";
export type { PricedUsage } from "./usage/priced-usage.js";
export type { UsageCounts } from "./usage/usage-counts.js";
export {
  costOf,
  PRICES_VARIABLE,
  priceFor,
  resolvePriceTable,
  type ModelPrice,
  type PriceTable,
} from "./usage/price-table.js";
export { USAGE_TOTAL_FILE } from "./store/usage-total.js";
// Budgets on tokens, cost and wall time (exec, turn, session, program per day)
export * from "./budgets/index.js";

// Wording shared by every package's messages
export { clipLine, clipText } from "./messages/clip-text.js";
export { describeValue } from "./messages/describe-value.js";
export { terminalText } from "./messages/terminal-text.js";
// Durable turns: resuming a turn that stopped short, answering questions that outlived their process
export {
  prepareResume,
  PreparedResume,
  resumeTurn,
  type ProgramResolver,
  type ResumableProgram,
  type ResumeTurnOptions,
} from "./turns/resume-turn.js";
export { checkRecordedModule, type RecordedModule, type RecordedModulePolicy } from "./turns/recorded-module.js";
export { answerQuestion, type AnswerQuestionOptions, type AnsweredQuestion } from "./turns/answer-question.js";
export { routeAnswer, type AnswerRoute, type RouteAnswerOptions } from "./turns/route-answer.js";
export {
  describeTurn,
  findResumableTurn,
  type FindTurnOptions,
  type PendingQuestion,
  type ResumableTurn,
} from "./turns/find-resumable.js";
export {
  moduleProgramRef,
  parseProgramRef,
  registeredProgramRef,
  RESEARCH_PROGRAM_REF,
  type ParsedProgramRef,
  type TurnProgram,
} from "./turns/program-ref.js";

// Compaction: long sessions stay inside the model's window (Python OpenProgram's summary nodes)
export { compactSession, type CompactionResult, type CompactSessionOptions } from "./compaction/compact-session.js";
export {
  AUTO_COMPACT_SHARE,
  resolveCompactionSettings,
  type CompactionSettings,
  type ResolvedCompactionSettings,
} from "./compaction/compaction-settings.js";
export { contextWindowOf, DEFAULT_CONTEXT_WINDOW, MODEL_CONTEXT_WINDOWS } from "./compaction/context-windows.js";
export { isContextOverflowError } from "./compaction/context-overflow.js";
export { countChatTokens, tokenizerFor, tokenUpperBound, type TokenizerName } from "./compaction/token-count.js";
export { SUMMARIZE_CONVERSATION_DOC, summaryRequest, type SummarizeInput } from "./compaction/summarizer.js";
export {
  activeSummaryId,
  coversIdsOf,
  isSummaryNode,
  SUMMARY_NODE_NAME,
  SUMMARY_OUTPUT_PREFIX,
} from "./compaction/summary-node.js";
export { compactionRecord, type CompactionRecord } from "./compaction/compaction-record.js";
export { describeCompaction } from "./compaction/compaction-wording.js";
export { branchTipRecord, type BranchTipRecord } from "./branches/branch-tip-record.js";

// Carrying a turn across a process boundary (the process runner uses these)
export { beginCurrentTurn, recordAbandonedNodes, relaySessionEvent } from "./context/relay.js";
export { CAPTURE_CONTENT_VARIABLE, GEN_AI, parseTraceparent, traceparentOf } from "./telemetry/spans.js";
export { ERROR_MESSAGES_VARIABLE, setTraceErrorMessages, tracesErrorMessages } from "./telemetry/spans.js";
export {
  startTraceExport,
  traceExportConfigured,
  TRACE_EXPORT_PROTOCOLS,
  type TraceExport,
  type TraceExportOptions,
} from "./telemetry/trace-export.js";

// Recording and replaying provider calls (offline tests)
export * from "./recordings/index.js";
export type { RecordedError as RecordedCallError } from "./recordings/recording-format.js";
