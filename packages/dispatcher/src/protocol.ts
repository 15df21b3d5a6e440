// The dispatcher's WebSocket protocol: JSON text frames, one object each, told
// apart by `type`. Every frame is documented with an example in README.md.
import type { AskOutcome, JsonSchema, SessionNode, SessionStatus } from "@openprogram/session-context";
import type { BudgetDimension, BudgetScope } from "@openprogram/session-context/budgets";
import { unserialisableResult } from "@openprogram/session-context/host";
import type {
  SessionDetail,
  SessionRecord,
  ToolCallRecord,
  ToolResultRecord,
} from "@openprogram/session-context/store";
import type { SessionUsage } from "@openprogram/session-context/usage";
import type { BranchClientFrame, BranchServerFrame } from "./branch-protocol.js";
import type * as schemas from "./client-frames.js";
import type { FrameOf } from "./client-frames.js";

export type * from "./branch-protocol.js";

/** Version of this protocol, sent in `hello`. */
export const PROTOCOL_VERSION = 1;

/** Frames larger than this are refused by the WebSocket layer (close code 1009). */
export const MAX_FRAME_BYTES = 1024 * 1024;

export { MAX_CLIENT_MSG_ID_LENGTH } from "./client-frames.js";

// Client frames: defined once as zod schemas in client-frames.ts (parse-frame.ts parses with them); their types here.
/** One chat turn: the user's text, answered by the configured model with the session's history. */
export type ChatFrame = FrameOf<typeof schemas.chatFrame>;
/** Runs a registered program with `input`. */
export type RunFrame = FrameOf<typeof schemas.runFrame>;
/** Answers a pending question (see client-frames.ts). */
export type AnswerFrame = FrameOf<typeof schemas.answerFrame>;
/** Continues the session's latest stopped turn (or `turn_id`) here, by replay. */
export type ResumeFrame = FrameOf<typeof schemas.resumeFrame>;
/** Declines a pending question. */
export type DeclineFrame = FrameOf<typeof schemas.declineFrame>;
/** Cancels the session's running turn. */
export type StopFrame = FrameOf<typeof schemas.stopFrame>;
/** Receives the session's events (and its pending questions). */
export type SubscribeFrame = FrameOf<typeof schemas.subscribeFrame>;
/** Stops receiving the session's events. */
export type UnsubscribeFrame = FrameOf<typeof schemas.unsubscribeFrame>;
/** Lists sessions, most recently updated first. */
export type ListSessionsFrame = FrameOf<typeof schemas.listSessionsFrame>;
/** Meta, conversation and call nodes of one session, a page of them. */
export type GetSessionFrame = FrameOf<typeof schemas.getSessionFrame>;
/** Every model request of a session: what the model saw. */
export type GetCallsFrame = FrameOf<typeof schemas.getCallsFrame>;
/** Deletes a session that is not running a turn. */
export type DeleteSessionFrame = FrameOf<typeof schemas.deleteSessionFrame>;
/** Archives (or unarchives) a session. */
export type ArchiveSessionFrame = FrameOf<typeof schemas.archiveSessionFrame>;
/** Compacts a session now. */
export type CompactFrame = FrameOf<typeof schemas.compactFrame>;
/** Lists the programs a `run` frame may name. */
export type ListProgramsFrame = FrameOf<typeof schemas.listProgramsFrame>;
/** Lists the MCP servers whose tools a `chat` frame may enable (`mcp_servers`). */
export type ListMcpServersFrame = FrameOf<typeof schemas.listMcpServersFrame>;

/** Every frame a client may send. */
export type ClientFrame =
  | ChatFrame
  | RunFrame
  | AnswerFrame
  | ResumeFrame
  | DeclineFrame
  | StopFrame
  | SubscribeFrame
  | UnsubscribeFrame
  | ListSessionsFrame
  | GetSessionFrame
  | GetCallsFrame
  | DeleteSessionFrame
  | ArchiveSessionFrame
  | CompactFrame
  | ListProgramsFrame
  | ListMcpServersFrame
  | BranchClientFrame;

/** The `type` of a client frame. */
export type ClientAction = ClientFrame["type"];

/** A registered program as the page lists it. */
export interface ProgramInfo {
  name: string;
  /** "agentic": an agentic function run in this process; "runner": an entry with its own `run` (e.g. a child process). */
  kind: "agentic" | "runner";
  description: string;
  /** The agentic function's doc (its instructions); "" for runner entries. */
  doc: string;
  /** The JSON Schema (draft 2020-12) of its input when it declares one (`agenticFunction({ input })`); the page builds its form from it. */
  input_schema: JsonSchema | null;
}

/** An MCP server the dispatcher offers (`openprogram serve --mcp <name>`). */
export interface McpServerInfo {
  name: string;
  /** "stdio": a program the dispatcher starts; "http": a Streamable HTTP endpoint. */
  transport: "stdio" | "http";
  /** Its tools that run without asking (the entry's `allow`); the others ask for approval. */
  allow: string[];
}

/** An error as it travels in frames. */
export interface FrameError {
  code: string;
  /** The error's class name (`TypeError`, `ProviderError`...), in `turn_failed`: the same as the CLI and the node report. */
  name?: string;
  message: string;
}

/** Sent once when a connection opens. */
export interface HelloFrame {
  type: "hello";
  protocol_version: number;
  server: "openprogram-dispatcher";
  version: string;
}

/** Always the first frame of a turn: which session it runs in (a new session's id arrives here). */
export interface SessionFrame {
  type: "session";
  session_id: string;
  created: boolean;
  turn_id: string;
  kind: "chat" | "run" | "resume";
  /** With kind "resume": the turn this one continues. */
  resumed_turn_id?: string;
  client_msg_id?: string;
}

/** A node of the session was appended or updated; the node as stored (snake_case). */
export interface NodeFrame {
  type: "node";
  session_id: string;
  op: "append" | "update";
  node: SessionNode;
}

/**
 * A piece of an llm node's reply as it streams, after the node's `append`
 * frame and before its final `update` frame; a node's delta texts concatenate
 * to its output. Coalesced (about one frame per node per 30 ms). A client that
 * subscribes mid-stream first gets the text so far in one delta frame.
 */
export interface DeltaFrame {
  type: "delta";
  session_id: string;
  node_id: string;
  text: string;
}

/** A question is waiting for an `answer` or `decline`. */
export interface QuestionFrame {
  type: "question";
  session_id: string;
  question_id: string;
  question: string;
  choices: string[] | null;
  timeout_ms: number | null;
}

/** A question stopped waiting. */
export interface QuestionClosedFrame {
  type: "question_closed";
  session_id: string;
  question_id: string;
  outcome: AskOutcome;
}

/** The session's status changed. */
export interface StatusFrame {
  type: "status";
  session_id: string;
  status: SessionStatus;
}

/** A turn finished; `result` is the chat reply or the program's output. */
export interface TurnDoneFrame {
  type: "turn_done";
  session_id: string;
  turn_id: string;
  result: unknown;
  client_msg_id?: string;
}

/** A turn failed or was cancelled (`error.code` "cancelled"). */
export interface TurnFailedFrame {
  type: "turn_failed";
  session_id: string;
  turn_id: string;
  error: FrameError;
  client_msg_id?: string;
}

/** Answer to `list_sessions`. */
export interface SessionsFrame {
  type: "sessions";
  sessions: SessionRecord[];
}

/** Answer to `get_session`. */
export interface SessionDetailFrame {
  type: "session_detail";
  session_id: string;
  session: SessionDetail["record"];
  meta: SessionDetail["meta"];
  /** The conversation branch, oldest first. */
  conversation: SessionNode[];
  /** Every node in seq order (the call tree nests them by `caller`). */
  nodes: SessionNode[];
  /** Node files that could not be read. */
  problems: SessionDetail["problems"];
  /** True while a turn runs in this dispatcher. */
  busy: boolean;
  /** The turn a `resume` frame would continue now, or null (see ResumableTurnInfo). */
  resumable: ResumableTurnInfo | null;
  /** Tokens (and costs, from the configured price table) per turn and in total: the core's describeSessionUsage. */
  usage: SessionUsage;
  /** Which nodes this frame holds: `nodes` and `conversation` are one page of them, newest first by pages. */
  page: SessionDetailPage;
  /** Only when the dispatcher has budgets (`serve --max-turn-tokens ...`): each beside what was spent against it. */
  budgets?: SessionBudgets;
}

/** The budgets of the dispatcher's turns beside the session's spending (the core's describeBudgets). */
export interface SessionBudgets {
  /** One per configured limit (scope and dimension), in the order exec, turn, session, program. */
  standings: BudgetStandingInfo[];
  /** The budget that stopped the session's latest turn, with the error's message; null when none did. */
  stopped_by: { scope: BudgetScope; dimension: BudgetDimension; message: string } | null;
}

/** One configured limit: a bar on the page. */
export interface BudgetStandingInfo {
  scope: BudgetScope;
  dimension: BudgetDimension;
  /** Tokens, US dollars or seconds. */
  limit: number;
  /** Spent against it (the latest turn, the session, the program's day); null for exec budgets (each exec on its own). */
  spent: number | null;
  /** What `spent` covers, in words. */
  over: string;
  /** This budget stopped the session's latest turn. */
  stopped_turn: boolean;
}

/** The page a `session_detail` holds. */
export interface SessionDetailPage {
  /** Nodes in the whole session. */
  total_nodes: number;
  /** The request's `before_seq`, or null for the newest page. */
  before_seq: number | null;
  /** `seq` of the page's oldest node (send it as `before_seq` for the page before), or null for an empty page. */
  first_seq: number | null;
  /** Older nodes are left out of this page. */
  has_more: boolean;
}

/** Answer to `get_calls`: each model request, rendered again from the nodes it read. */
export interface CallsFrame {
  type: "calls";
  session_id: string;
  calls: ModelCallInfo[];
}

/** One model request (the core's RecordedModelCall, in the protocol's snake_case). */
export interface ModelCallInfo {
  node_id: string;
  caller_name: string | null;
  model: string;
  provider: string | null;
  status: string | null;
  system: string | null;
  messages: Array<{ role: string; content: string }>;
  reply: string | null;
  usage: unknown;
  duration_seconds: number | null;
  prompt_sha256: string | null;
  /** True: the messages give exactly the bytes sent; false: they do not; null: not checkable. */
  verified: boolean | null;
}

/** A stopped turn the page may offer to continue. */
export interface ResumableTurnInfo {
  turn_id: string;
  /** Its top-level function. */
  name: string;
  /** interrupted, failed, cancelled, ... (how it stopped). */
  status: string;
  /** The question it waits for, if any (answering it continues the turn too). */
  question_id: string | null;
  /**
   * False for an error the program raised itself: a resume would replay the same failure from the record (fix the
   * program and run it again); true for a crash, a stop, or a model, network or store failure.
   */
  resume_helps: boolean;
  /** Steps a resume returns from the record instead of running them again (model calls, answers, calls). */
  finished_calls: number;
  /** The error the turn stopped with (code, class name, message), or null. */
  error: { code: string; name: string; message: string } | null;
}

/** Answer to `subscribe`; pending questions of the session follow it, then the text so far of replies streaming. */
export interface SubscribedFrame {
  type: "subscribed";
  session_id: string;
  status: string;
  busy: boolean;
}

/**
 * Frames of the session may have been missed (in a cluster: this replica's event channel, or the one of the
 * replica running its turn, was down for a while). The client drops the streamed text and questions it holds for
 * the session; a `session_detail` follows, then the pending questions and the text so far of replies streaming
 * now, as after `subscribe`.
 */
export interface ResyncFrame {
  type: "resync";
  session_id: string;
  reason: string;
}

/** Answer to `unsubscribe`. */
export interface UnsubscribedFrame {
  type: "unsubscribed";
  session_id: string;
}

/** A session was deleted (to the client that asked and the session's subscribers). */
export interface SessionDeletedFrame {
  type: "session_deleted";
  session_id: string;
}

/** A session was archived or unarchived (to the client that asked and the session's subscribers). */
export interface SessionArchivedFrame {
  type: "session_archived";
  session_id: string;
  archived: boolean;
}

/** Answer to `list_programs`. */
export interface ProgramsFrame {
  type: "programs";
  programs: ProgramInfo[];
}

/** Answer to `list_mcp_servers` (an empty list when the dispatcher offers none). */
export interface McpServersFrame {
  type: "mcp_servers";
  servers: McpServerInfo[];
}

/**
 * The model asked for a tool and its execution began (`node_id`: the code node
 * recording it, under the llm node `llm_node_id`), then ended (`ok`, or the
 * `error` the model reads). The core's wire form (`toolRecord`).
 */
export type ToolCallFrame = ToolCallRecord;
/** See ToolCallFrame. */
export type ToolResultFrame = ToolResultRecord;

/**
 * A model request failed before any text and is sent again after `delay_ms`
 * (the core's `retry` event, within the exec's retries and deadline).
 */
export interface RetryFrame {
  type: "retry";
  session_id: string;
  /** The llm node of the request. */
  node_id: string;
  /** The attempt about to be made (2 for the first retry). */
  attempt: number;
  delay_ms: number;
  /** Why the last attempt failed, in a sentence. */
  reason: string;
}

/**
 * A compaction of the session started, finished or failed: during a turn (the
 * request neared the model's window, or the provider refused it as too long)
 * or asked for with `compact`. A finished one names the summary node, which
 * stands for `covered` earlier nodes from then on.
 */
export interface CompactionFrame {
  type: "compaction";
  session_id: string;
  phase: "started" | "finished" | "failed";
  reason: "auto" | "overflow" | "manual";
  summary_id?: string | null;
  covered?: number;
  kept?: number;
  tokens_before?: number;
  tokens_after?: number;
  error?: string;
  /** The event in a sentence, worded by the core (`describeCompaction`), as the CLI prints it. */
  text: string;
}

/** Answer to `compact`: the summary written (null when there was nothing to summarise). */
export interface CompactedFrame {
  type: "compacted";
  session_id: string;
  summary_id: string | null;
  covered: number;
  kept: number;
  tokens_before: number;
  tokens_after: number;
}

/** A frame could not be acted on; the connection stays usable. */
export interface ErrorFrame {
  type: "error";
  code: string;
  message: string;
  /** The `client_msg_id` of the frame this answers, when it had one. */
  ref?: string;
  /** The `type` of the frame this answers, when it could be read. */
  action?: string;
}

/** Every frame the server sends. */
export type ServerFrame =
  | HelloFrame
  | SessionFrame
  | NodeFrame
  | DeltaFrame
  | QuestionFrame
  | QuestionClosedFrame
  | StatusFrame
  | TurnDoneFrame
  | TurnFailedFrame
  | SessionsFrame
  | SessionDetailFrame
  | CallsFrame
  | SubscribedFrame
  | ResyncFrame
  | UnsubscribedFrame
  | SessionDeletedFrame
  | SessionArchivedFrame
  | ProgramsFrame
  | McpServersFrame
  | BranchServerFrame
  | CompactionFrame
  | CompactedFrame
  | RetryFrame
  | ToolCallFrame
  | ToolResultFrame
  | ErrorFrame;

/**
 * Serialises a server frame. A turn result that JSON cannot carry (a BigInt,
 * a cycle, nesting deeper than JSON.stringify goes) is replaced by the core's
 * `unserialisableResult` rather than failing the send.
 */
export function encodeFrame(frame: ServerFrame): string {
  try {
    return JSON.stringify(frame);
  } catch (error) {
    if (frame.type !== "turn_done") throw error;
    return JSON.stringify({ ...frame, result: unserialisableResult(error) });
  }
}
