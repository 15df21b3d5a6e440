// @openprogram/session-context/compaction: keeping long sessions inside the model's window
// (Python OpenProgram's summary nodes): the policy a runtime is given, compacting a session
// on demand (`openprogram sessions compact`, the dispatcher) and reading summary nodes.

export { compactSession, type CompactionResult, type CompactSessionOptions } from "../compaction/compact-session.js";
export {
  AUTO_COMPACT_SHARE,
  resolveCompactionSettings,
  type CompactionSettings,
  type ResolvedCompactionSettings,
} from "../compaction/compaction-settings.js";
export type { CompactionPort, WindowedPrompt } from "../runtime/compaction-port.js";
export { contextWindowPolicy, type ContextWindowPolicyOptions } from "../compaction/window-policy.js";
export { contextWindowOf, DEFAULT_CONTEXT_WINDOW, MODEL_CONTEXT_WINDOWS } from "../compaction/context-windows.js";
export { isContextOverflowError } from "../compaction/context-overflow.js";
export { countChatTokens, tokenizerFor, tokenUpperBound, type TokenizerName } from "../compaction/token-count.js";
export { SUMMARIZE_CONVERSATION_DOC, summaryRequest, type SummarizeInput } from "../compaction/summarizer.js";
export {
  activeSummaryId,
  coversIdsOf,
  isSummaryNode,
  SUMMARY_NODE_NAME,
  SUMMARY_OUTPUT_PREFIX,
} from "../compaction/summary-node.js";
export { compactionRecord, type CompactionRecord } from "../compaction/compaction-record.js";
export { describeCompaction } from "../compaction/compaction-wording.js";
