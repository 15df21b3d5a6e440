// The dispatcher's WebSocket protocol: JSON text frames, one object each, told
// apart by `type`. Every frame is documented with an example in README.md.
import type { CompactionRecord } from "@openprogram/session-context/compaction";
import { unserialisableResult } from "@openprogram/session-context/host";
import type { ToolCallRecord, ToolResultRecord } from "@openprogram/session-context/store";
import type { z } from "zod";
import type { BranchClientFrame } from "./branch-protocol.js";
import type * as schemas from "./client-frames.js";
import type { FrameOf } from "./client-frames.js";
import type * as frames from "./server-frames.js";

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

// Server frames: defined once as zod schemas in server-frames.ts (the tests parse what the server sends with them);
// their types here, so every frame the server builds is checked against them.
/** A registered program as the page lists it. */
export type ProgramInfo = z.output<typeof frames.programInfo>;
/** An MCP server the dispatcher offers (`openprogram serve --mcp <name>`). */
export type McpServerInfo = z.output<typeof frames.mcpServerInfo>;
/** An error as it travels in frames. */
export type FrameError = z.output<typeof frames.frameError>;
/** Sent once when a connection opens. */
export type HelloFrame = z.output<typeof frames.helloFrame>;
/** Always the first frame of a turn: which session it runs in (a new session's id arrives here). */
export type SessionFrame = z.output<typeof frames.sessionFrame>;
/** A node of the session was appended or updated; the node as stored (snake_case). */
export type NodeFrame = z.output<typeof frames.nodeFrame>;
/** A piece of an llm node's reply as it streams (see server-frames.ts). */
export type DeltaFrame = z.output<typeof frames.deltaFrame>;
/** A question is waiting for an `answer` or `decline`. */
export type QuestionFrame = z.output<typeof frames.questionFrame>;
/** A question stopped waiting. */
export type QuestionClosedFrame = z.output<typeof frames.questionClosedFrame>;
/** The session's status changed. */
export type StatusFrame = z.output<typeof frames.statusFrame>;
/** A turn finished; `result` is the chat reply or the program's output. */
export type TurnDoneFrame = z.output<typeof frames.turnDoneFrame>;
/** A turn failed or was cancelled (`error.code` "cancelled"). */
export type TurnFailedFrame = z.output<typeof frames.turnFailedFrame>;
/** Answer to `list_sessions`. */
export type SessionsFrame = z.output<typeof frames.sessionsFrame>;
/** Answer to `get_session`. */
export type SessionDetailFrame = z.output<typeof frames.sessionDetailFrame>;
/** The budgets of the dispatcher's turns beside the session's spending (the core's describeBudgets). */
export type SessionBudgets = z.output<typeof frames.sessionBudgets>;
/** One configured limit: a bar on the page. */
export type BudgetStandingInfo = z.output<typeof frames.budgetStandingInfo>;
/** The page a `session_detail` holds. */
export type SessionDetailPage = z.output<typeof frames.sessionDetailPage>;
/** Answer to `get_calls`: each model request, rendered again from the nodes it read. */
export type CallsFrame = z.output<typeof frames.callsFrame>;
/** One model request (the core's RecordedModelCall, in the protocol's snake_case). */
export type ModelCallInfo = z.output<typeof frames.modelCallInfo>;
/** A stopped turn the page may offer to continue. */
export type ResumableTurnInfo = z.output<typeof frames.resumableTurnInfo>;
/** Answer to `subscribe`; pending questions of the session follow it, then the text so far of replies streaming. */
export type SubscribedFrame = z.output<typeof frames.subscribedFrame>;
/** Frames of the session may have been missed; a `session_detail` follows (see server-frames.ts). */
export type ResyncFrame = z.output<typeof frames.resyncFrame>;
/** Answer to `unsubscribe`. */
export type UnsubscribedFrame = z.output<typeof frames.unsubscribedFrame>;
/** A session was deleted (to the client that asked and the session's subscribers). */
export type SessionDeletedFrame = z.output<typeof frames.sessionDeletedFrame>;
/** A session was archived or unarchived (to the client that asked and the session's subscribers). */
export type SessionArchivedFrame = z.output<typeof frames.sessionArchivedFrame>;
/** Answer to `list_programs`. */
export type ProgramsFrame = z.output<typeof frames.programsFrame>;
/** Answer to `list_mcp_servers` (an empty list when the dispatcher offers none). */
export type McpServersFrame = z.output<typeof frames.mcpServersFrame>;
/**
 * The model asked for a tool and its execution began (`node_id`: the code node
 * recording it, under the llm node `llm_node_id`), then ended (`ok`, or the
 * `error` the model reads). The core's wire form (`toolRecord`).
 */
export type ToolCallFrame = ToolCallRecord;
/** See ToolCallFrame. */
export type ToolResultFrame = ToolResultRecord;
/** A model request failed before any text and is sent again after `delay_ms` (the core's `retry` event). */
export type RetryFrame = z.output<typeof frames.retryFrame>;
/**
 * A compaction of the session started, finished or failed: the core's CompactionRecord (`compactionRecord`), the
 * same record the CLI's `--events` lines carry.
 */
export type CompactionFrame = CompactionRecord;
/** Answer to `compact`: the summary written (null when there was nothing to summarise). */
export type CompactedFrame = z.output<typeof frames.compactedFrame>;
/** A frame could not be acted on; the connection stays usable. */
export type ErrorFrame = z.output<typeof frames.errorFrame>;

/** Every frame the server sends (one per schema of server-frames.ts's SERVER_FRAMES). */
export type ServerFrame = z.output<(typeof frames.SERVER_FRAMES)[keyof typeof frames.SERVER_FRAMES]>;

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
