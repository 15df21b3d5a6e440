// The frames the server sends, defined once as zod schemas: protocol.ts (and branch-protocol.ts) infer their types
// from them, so every frame the server builds is checked against them by the compiler, and the tests parse what the
// server really sends with them (test/server-frames.test.ts, and every frame a TestClient receives).
//
// The dispatcher's own fields are listed here, strictly (a field the server sends that a schema lacks is an error).
// A value the core defines (a node, a session record, its usage, a tool or compaction record, a branch tip, a status)
// is the core's type, checked here only for its JSON kind: the core owns its fields, so they are not listed twice.
import type { AskOutcome, JsonSchema, SessionNode, SessionStatus } from "@openprogram/session-context";
import type { BudgetDimension, BudgetScope } from "@openprogram/session-context/budgets";
import type { CompactionRecord } from "@openprogram/session-context/compaction";
import type { ChatMessage } from "@openprogram/session-context/runtime";
import type {
  BranchTipRecord,
  SessionDetail,
  SessionRecord,
  ToolCallRecord,
  ToolResultRecord,
} from "@openprogram/session-context/store";
import type { SessionUsage } from "@openprogram/session-context/usage";
import { z } from "zod";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A JSON object the core defines: its type is the core's (`T`), its fields the core's to check. */
function coreObject<T>(what: string) {
  return z.custom<T>(isObject, { error: `${what}: a JSON object (as the core writes it)` });
}

/** A record of the core's that carries its own `type` (a tool or compaction event's wire form). */
function coreRecord<T extends { type: string }>(type: T["type"]) {
  return z.custom<T>((value) => isObject(value) && value.type === type && typeof value.session_id === "string", {
    error: `a ${type} record with its session_id (as the core writes it)`,
  });
}

/** A word the core defines (a status, an outcome, a budget's scope). */
function coreWord<T extends string>(what: string) {
  return z.custom<T>((value) => typeof value === "string" && value !== "", { error: `${what}: a non-empty string` });
}

/** A frame's schema: its `type`, then its fields; no other field. */
function frame<const T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.strictObject({ type: z.literal(type), ...shape });
}

/** The `client_msg_id` of the frame that caused this one, echoed when it had one. */
const echoed = z.string().optional();

/** A registered program as the page lists it. */
export const programInfo = z.strictObject({
  name: z.string(),
  /** "agentic": an agentic function run in this process; "runner": an entry with its own `run` (e.g. a child process). */
  kind: z.enum(["agentic", "runner"]),
  description: z.string(),
  /** The agentic function's doc (its instructions); "" for runner entries. */
  doc: z.string(),
  /** The JSON Schema (draft 2020-12) of its input when it declares one (`agenticFunction({ input })`); the page builds its form from it. */
  input_schema: coreObject<JsonSchema>("input_schema").nullable(),
});

/** An MCP server the dispatcher offers (`openprogram serve --mcp <name>`). */
export const mcpServerInfo = z.strictObject({
  name: z.string(),
  /** "stdio": a program the dispatcher starts; "http": a Streamable HTTP endpoint. */
  transport: z.enum(["stdio", "http"]),
  /** Its tools that run without asking (the entry's `allow`); the others ask for approval. */
  allow: z.array(z.string()),
});

/** An error as it travels in frames. */
export const frameError = z.strictObject({
  code: z.string(),
  /** The error's class name (`TypeError`, `ProviderError`...), in `turn_failed`: the same as the CLI and the node report. */
  name: z.string().optional(),
  message: z.string(),
});

/** Sent once when a connection opens. */
export const helloFrame = frame("hello", {
  protocol_version: z.number().int(),
  server: z.literal("openprogram-dispatcher"),
  version: z.string(),
});

/** Always the first frame of a turn: which session it runs in (a new session's id arrives here). */
export const sessionFrame = frame("session", {
  session_id: z.string(),
  created: z.boolean(),
  turn_id: z.string(),
  kind: z.enum(["chat", "run", "resume"]),
  /** With kind "resume": the turn this one continues. */
  resumed_turn_id: z.string().optional(),
  client_msg_id: echoed,
});

/** A node of the session was appended or updated; the node as stored (snake_case). */
export const nodeFrame = frame("node", {
  session_id: z.string(),
  op: z.enum(["append", "update"]),
  node: coreObject<SessionNode>("node"),
});

/**
 * A piece of an llm node's reply as it streams, after the node's `append`
 * frame and before its final `update` frame; a node's delta texts concatenate
 * to its output. Coalesced (about one frame per node per 30 ms). A client that
 * subscribes mid-stream first gets the text so far in one delta frame.
 */
export const deltaFrame = frame("delta", {
  session_id: z.string(),
  node_id: z.string(),
  text: z.string(),
});

/** A question is waiting for an `answer` or `decline`. */
export const questionFrame = frame("question", {
  session_id: z.string(),
  question_id: z.string(),
  question: z.string(),
  choices: z.array(z.string()).nullable(),
  timeout_ms: z.number().nullable(),
});

/** A question stopped waiting. */
export const questionClosedFrame = frame("question_closed", {
  session_id: z.string(),
  question_id: z.string(),
  outcome: coreWord<AskOutcome>("outcome"),
});

/** The session's status changed. */
export const statusFrame = frame("status", {
  session_id: z.string(),
  status: coreWord<SessionStatus>("status"),
});

/** A turn finished; `result` is the chat reply or the program's output. */
export const turnDoneFrame = frame("turn_done", {
  session_id: z.string(),
  turn_id: z.string(),
  result: z.unknown(),
  client_msg_id: echoed,
});

/** A turn failed or was cancelled (`error.code` "cancelled"). */
export const turnFailedFrame = frame("turn_failed", {
  session_id: z.string(),
  turn_id: z.string(),
  error: frameError,
  client_msg_id: echoed,
});

/** Answer to `list_sessions`. */
export const sessionsFrame = frame("sessions", {
  sessions: z.array(coreObject<SessionRecord>("sessions[]")),
});

/** One configured limit: a bar on the page. */
export const budgetStandingInfo = z.strictObject({
  scope: coreWord<BudgetScope>("scope"),
  dimension: coreWord<BudgetDimension>("dimension"),
  /** Tokens, US dollars or seconds. */
  limit: z.number(),
  /** Spent against it (the latest turn, the session, the program's day); null for exec budgets (each exec on its own). */
  spent: z.number().nullable(),
  /** What `spent` covers, in words. */
  over: z.string(),
  /** This budget stopped the session's latest turn. */
  stopped_turn: z.boolean(),
});

/** The budgets of the dispatcher's turns beside the session's spending (the core's describeBudgets). */
export const sessionBudgets = z.strictObject({
  /** One per configured limit (scope and dimension), in the order exec, turn, session, program. */
  standings: z.array(budgetStandingInfo),
  /** The budget that stopped the session's latest turn, with the error's message; null when none did. */
  stopped_by: z
    .strictObject({
      scope: coreWord<BudgetScope>("scope"),
      dimension: coreWord<BudgetDimension>("dimension"),
      message: z.string(),
    })
    .nullable(),
});

/** The page a `session_detail` holds. */
export const sessionDetailPage = z.strictObject({
  /** Nodes in the whole session. */
  total_nodes: z.number().int(),
  /** The request's `before_seq`, or null for the newest page. */
  before_seq: z.number().int().nullable(),
  /** `seq` of the page's oldest node (send it as `before_seq` for the page before), or null for an empty page. */
  first_seq: z.number().int().nullable(),
  /** Older nodes are left out of this page. */
  has_more: z.boolean(),
});

/** A stopped turn the page may offer to continue. */
export const resumableTurnInfo = z.strictObject({
  turn_id: z.string(),
  /** Its top-level function. */
  name: z.string(),
  /** interrupted, failed, cancelled, ... (how it stopped). */
  status: z.string(),
  /** The question it waits for, if any (answering it continues the turn too). */
  question_id: z.string().nullable(),
  /**
   * False for an error the program raised itself: a resume would replay the same failure from the record (fix the
   * program and run it again); true for a crash, a stop, or a model, network or store failure.
   */
  resume_helps: z.boolean(),
  /** Steps a resume returns from the record instead of running them again (model calls, answers, calls). */
  finished_calls: z.number().int(),
  /** The error the turn stopped with (code, class name, message), or null. */
  error: z.strictObject({ code: z.string(), name: z.string(), message: z.string() }).nullable(),
});

/** Answer to `get_session`. */
export const sessionDetailFrame = frame("session_detail", {
  session_id: z.string(),
  session: coreObject<SessionDetail["record"]>("session"),
  meta: coreObject<SessionDetail["meta"]>("meta"),
  /** The conversation branch, oldest first. */
  conversation: z.array(coreObject<SessionNode>("conversation[]")),
  /** Every node in seq order (the call tree nests them by `caller`). */
  nodes: z.array(coreObject<SessionNode>("nodes[]")),
  /** Node files that could not be read. */
  problems: z.array(coreObject<SessionDetail["problems"][number]>("problems[]")),
  /** True while a turn runs in this dispatcher. */
  busy: z.boolean(),
  /** The turn a `resume` frame would continue now, or null (see ResumableTurnInfo). */
  resumable: resumableTurnInfo.nullable(),
  /** Tokens (and costs, from the configured price table) per turn and in total: the core's describeSessionUsage. */
  usage: coreObject<SessionUsage>("usage"),
  /** Which nodes this frame holds: `nodes` and `conversation` are one page of them, newest first by pages. */
  page: sessionDetailPage,
  /** Only when the dispatcher has budgets (`serve --max-turn-tokens ...`): each beside what was spent against it. */
  budgets: sessionBudgets.optional(),
});

/** One model request (the core's RecordedModelCall, in the protocol's snake_case). */
export const modelCallInfo = z.strictObject({
  node_id: z.string(),
  caller_name: z.string().nullable(),
  model: z.string(),
  provider: z.string().nullable(),
  status: z.string().nullable(),
  system: z.string().nullable(),
  /** Every message sent, system first, as the core renders them from the nodes (its ChatMessage: `role`, `content`, ...). */
  messages: z.array(coreObject<ChatMessage>("messages[]")),
  reply: z.string().nullable(),
  usage: z.unknown(),
  duration_seconds: z.number().nullable(),
  prompt_sha256: z.string().nullable(),
  /** True: the messages give exactly the bytes sent; false: they do not; null: not checkable. */
  verified: z.boolean().nullable(),
});

/** Answer to `get_calls`: each model request, rendered again from the nodes it read. */
export const callsFrame = frame("calls", {
  session_id: z.string(),
  calls: z.array(modelCallInfo),
});

/** Answer to `subscribe`; pending questions of the session follow it, then the text so far of replies streaming. */
export const subscribedFrame = frame("subscribed", {
  session_id: z.string(),
  status: z.string(),
  busy: z.boolean(),
});

/**
 * Frames of the session may have been missed (in a cluster: this replica's event channel, or the one of the
 * replica running its turn, was down for a while). The client drops the streamed text and questions it holds for
 * the session; a `session_detail` follows, then the pending questions and the text so far of replies streaming
 * now, as after `subscribe`.
 */
export const resyncFrame = frame("resync", {
  session_id: z.string(),
  reason: z.string(),
});

/** Answer to `unsubscribe`. */
export const unsubscribedFrame = frame("unsubscribed", { session_id: z.string() });

/** A session was deleted (to the client that asked and the session's subscribers). */
export const sessionDeletedFrame = frame("session_deleted", { session_id: z.string() });

/** A session was archived or unarchived (to the client that asked and the session's subscribers). */
export const sessionArchivedFrame = frame("session_archived", {
  session_id: z.string(),
  archived: z.boolean(),
});

/** Answer to `list_programs`. */
export const programsFrame = frame("programs", { programs: z.array(programInfo) });

/** Answer to `list_mcp_servers` (an empty list when the dispatcher offers none). */
export const mcpServersFrame = frame("mcp_servers", { servers: z.array(mcpServerInfo) });

/** The session's branch tips, newest first, and its head (which may be a turn before a tip). */
export const branchesFrame = frame("branches", {
  session_id: z.string(),
  head_id: z.string().nullable(),
  /** One per tip: the core's wire form of a BranchTip (`active`: the head is this tip; `trunk`: the trunk's tip). */
  branches: z.array(coreObject<BranchTipRecord>("branches[]")),
  client_msg_id: echoed,
});

/** The session's head moved (to the client that asked and the session's subscribers). */
export const headMovedFrame = frame("head_moved", {
  session_id: z.string(),
  head_id: z.string(),
  previous_head_id: z.string().nullable(),
});

/**
 * A compaction of the session started, finished or failed: during a turn (the request neared the model's window,
 * or the provider refused it as too long) or asked for with `compact`. A finished one names the summary node, which
 * stands for `covered` earlier nodes from then on. The core's wire form (`compactionRecord`), as the CLI's
 * `--events` lines carry it; `text` is the event in a sentence, worded by the core.
 */
export const compactionFrame = coreRecord<CompactionRecord>("compaction");

/** Answer to `compact`: the summary written (null when there was nothing to summarise). */
export const compactedFrame = frame("compacted", {
  session_id: z.string(),
  summary_id: z.string().nullable(),
  covered: z.number().int(),
  kept: z.number().int(),
  tokens_before: z.number(),
  tokens_after: z.number(),
});

/**
 * A model request failed before any text and is sent again after `delay_ms`
 * (the core's `retry` event, within the exec's retries and deadline).
 */
export const retryFrame = frame("retry", {
  session_id: z.string(),
  /** The llm node of the request. */
  node_id: z.string(),
  /** The attempt about to be made (2 for the first retry). */
  attempt: z.number().int(),
  delay_ms: z.number(),
  /** Why the last attempt failed, in a sentence. */
  reason: z.string(),
});

/**
 * The model asked for a tool and its execution began (`node_id`: the code node recording it, under the llm node
 * `llm_node_id`). The core's wire form (`toolRecord`).
 */
export const toolCallFrame = coreRecord<ToolCallRecord>("tool_call");

/** A tool's execution ended (`ok`, or the `error` the model reads). The core's wire form (`toolRecord`). */
export const toolResultFrame = coreRecord<ToolResultRecord>("tool_result");

/** A frame could not be acted on; the connection stays usable. */
export const errorFrame = frame("error", {
  code: z.string(),
  message: z.string(),
  /** The `client_msg_id` of the frame this answers, when it had one. */
  ref: z.string().optional(),
  /** The `type` of the frame this answers, when it could be read. */
  action: z.string().optional(),
});

/** Every server frame's schema, by its `type`. */
export const SERVER_FRAMES = {
  hello: helloFrame,
  session: sessionFrame,
  node: nodeFrame,
  delta: deltaFrame,
  question: questionFrame,
  question_closed: questionClosedFrame,
  status: statusFrame,
  turn_done: turnDoneFrame,
  turn_failed: turnFailedFrame,
  sessions: sessionsFrame,
  session_detail: sessionDetailFrame,
  calls: callsFrame,
  subscribed: subscribedFrame,
  resync: resyncFrame,
  unsubscribed: unsubscribedFrame,
  session_deleted: sessionDeletedFrame,
  session_archived: sessionArchivedFrame,
  programs: programsFrame,
  mcp_servers: mcpServersFrame,
  branches: branchesFrame,
  head_moved: headMovedFrame,
  compaction: compactionFrame,
  compacted: compactedFrame,
  retry: retryFrame,
  tool_call: toolCallFrame,
  tool_result: toolResultFrame,
  error: errorFrame,
} as const;

/** The `type` of a server frame. */
export type ServerFrameType = keyof typeof SERVER_FRAMES;

/**
 * Checks a decoded server frame against its schema: the frame, or a sentence naming its `type` and first problem.
 * For clients and tests; the server itself builds its frames from the inferred types.
 */
export function checkServerFrame(
  value: unknown,
): { ok: true; frame: z.output<(typeof SERVER_FRAMES)[ServerFrameType]> } | { ok: false; problem: string } {
  const type = isObject(value) ? value.type : undefined;
  if (typeof type !== "string" || !Object.hasOwn(SERVER_FRAMES, type))
    return { ok: false, problem: `not a server frame: type ${JSON.stringify(type)}` };
  const parsed = SERVER_FRAMES[type as ServerFrameType].safeParse(value);
  if (parsed.success) return { ok: true, frame: parsed.data };
  return { ok: false, problem: `${type} frame: ${z.prettifyError(parsed.error)}` };
}
