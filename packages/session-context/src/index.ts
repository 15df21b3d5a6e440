// @openprogram/session-context: what a program author writes programs with.
// Entry files only re-export; the logic lives in the folders named for each
// responsibility. Hosts, stores, telemetry and tests import from the named
// subpaths (src/entries/*.ts, listed in package.json `exports` and the README's
// "Entry points"); test/entry-points.test.ts pins this list, so growth is deliberate.

// Every error class, and the helpers that read errors
export * from "./errors.js";
export type { ErrorCode, ErrorCodesOf } from "./error-code.js";
export {
  BudgetExceededError,
  InvalidBudgetError,
  RateLimitedError,
  UnpricedModelError,
} from "./budgets/budget-errors.js";
export {
  RecordingFormatError,
  RecordingMissingError,
  ReplayedFailureError,
  ReplayExhaustedError,
  ReplayMismatchError,
} from "./recordings/recording-errors.js";

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
  type AgenticCallContext,
  type AgenticDeclaration,
  type AgenticFunction,
  type AgenticFunctionSpec,
  type ExposeMode,
} from "./agentic/agentic-function.js";
export type { JsonSchema } from "./agentic/input-schema.js";
export { askUser, type AskUserOptions } from "./ask/ask-user.js";
export type { AskRequest, AskResponse, Asker } from "./ask/types.js";

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

// What exec and chat take (structured output: `schema`, `choices`, `onPartial`; content blocks)
export { chat } from "./runtime/chat.js";
export type { ChatOptions, ExecOptions, Runtime } from "./runtime/types.js";
export type { RetryInfo } from "./runtime/request-attempts.js";
export type { ContentBlock, ExecContent, InlineData } from "./content/content-blocks.js";

// The types the options above name: the store a context writes to, what it records, budgets
export type { SessionDB } from "./store/session-db.js";
export type { SessionNode, SessionStatus } from "./store/types.js";
export type { BudgetLimit, Budgets } from "./budgets/budget-types.js";
