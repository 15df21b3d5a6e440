// The frames a client sends, defined once as zod schemas: parse-frame.ts parses with them, and protocol.ts (and
// branch-protocol.ts) take their types from them (`z.infer`). Every problem is worded as the protocol's errors are
// (`<action>.<field> is missing; send a string.`), and a session id or an input nested too deep keeps the core's
// own error (its code and message).
import { InvalidInputError, type OpenProgramError } from "@openprogram/session-context";
import { assertNestingDepth } from "@openprogram/session-context/host";
import { describeValue } from "@openprogram/session-context/messages";
import { assertValidSessionId } from "@openprogram/session-context/store";
import { z } from "zod";

/** Longest `client_msg_id` accepted; it is echoed back, so it stays small. */
export const MAX_CLIENT_MSG_ID_LENGTH = 128;

/** What a zod error function is given (the value read, when there was one). */
type Issue = { input?: unknown };

/** A core check (session id, nesting depth) run inside a schema: its error travels in the issue's params. */
function coreCheck(check: (value: unknown) => void) {
  return (value: unknown, context: z.core.$RefinementCtx) => {
    try {
      check(value);
    } catch (error) {
      context.addIssue({ code: "custom", message: (error as Error).message, params: { error } });
    }
  };
}

/** The schema of one frame's fields, each named `<action>.<field>` in its errors. */
function fieldsOf(action: string) {
  const named = (name: string) => `${action}.${name}`;
  const missingOr = (name: string, what: string) => (issue: Issue) =>
    issue.input === undefined
      ? `${named(name)} is missing; send ${what}.`
      : `${named(name)} must be ${what}, not ${describeValue(issue.input)}.`;
  return {
    /** A non-empty string (blank is refused too). */
    text: (name: string) =>
      z
        .string({ error: missingOr(name, "a string") })
        .refine((value) => value.trim() !== "", { error: `${named(name)} is empty; send a non-empty string.` }),
    /** An answer: any string, even empty. */
    answer: (name: string) =>
      z.string({ error: missingOr(name, "a string (the answer, or a choice's 1-based number as a string)") }),
    optionalText: (name: string, maxLength = 10_000) =>
      z
        .string({ error: (issue: Issue) => `${named(name)} must be a string, not ${describeValue(issue.input)}.` })
        .max(maxLength, {
          error: (issue: Issue) =>
            `${named(name)} is ${String((issue.input as string).length)} characters long; at most ${maxLength}.`,
        })
        .nullish(),
    sessionId: () =>
      z.custom<string>().superRefine(
        coreCheck((value) => {
          if (value === undefined || value === null)
            throw new InvalidInputError(`${named("session_id")} is missing; send a session id.`);
          assertValidSessionId(value);
        }),
      ),
    optionalSessionId: () =>
      z
        .custom<string>()
        .superRefine(coreCheck((value) => value === undefined || value === null || assertValidSessionId(value)))
        .nullish(),
    optionalInteger: (name: string, min: number, max: number) => {
      const error = (issue: Issue) =>
        `${named(name)} must be an integer from ${min} to ${max}, not ${describeValue(issue.input)}.`;
      return z.number({ error }).int({ error }).min(min, { error }).max(max, { error }).nullish();
    },
    optionalBoolean: (name: string) =>
      z
        .boolean({
          error: (issue: Issue) => `${named(name)} must be true or false, not ${describeValue(issue.input)}.`,
        })
        .nullish(),
    /** Any JSON value, nested at most as deep as the core allows. */
    anyJson: (name: string) =>
      z
        .unknown()
        .superRefine(coreCheck((value) => assertNestingDepth(value, named(name))))
        .optional(),
    /** A list of at most 32 non-empty names of at most 128 characters each. */
    optionalNames: (name: string) =>
      z
        .array(
          z
            .string({ error: (issue: Issue) => namesOnly(named(name), issue.input) })
            .min(1, { error: (issue: Issue) => namesOnly(named(name), issue.input) })
            .max(128, { error: (issue: Issue) => namesOnly(named(name), issue.input) }),
          {
            error: (issue: Issue) =>
              `${named(name)} must be a list of at most 32 names, not ${describeValue(issue.input)}.`,
          },
        )
        .max(32, {
          error: (issue: Issue) =>
            `${named(name)} must be a list of at most 32 names, not ${describeValue(issue.input)}.`,
        })
        .nullish(),
  };
}

function namesOnly(field: string, value: unknown): string {
  return `${field} must hold names (non-empty strings of at most 128 characters), not ${describeValue(value)}.`;
}

/** A frame's schema: its `type`, the fields every frame may carry, then its own. */
function frame<const A extends string, S extends z.ZodRawShape>(
  action: A,
  shape: (f: ReturnType<typeof fieldsOf>) => S,
) {
  const fields = fieldsOf(action);
  return z.object({
    type: z.literal(action),
    /** Echoed in the `session`, `turn_done`, `turn_failed` and `error` frames this frame causes. */
    client_msg_id: fields.optionalText("client_msg_id", MAX_CLIENT_MSG_ID_LENGTH),
    ...shape(fields),
  });
}

/** One chat turn: the user's text, answered by the configured model with the session's history. */
export const chatFrame = frame("chat", (f) => ({
  /** Continue (or create under) this session; absent: a new session. */
  session_id: f.optionalSessionId(),
  text: f.text("text"),
  /** Edit and resend: a past user message of the session; the text forks beside it on a new branch. */
  from: f.optionalText("from", 128),
  /**
   * MCP servers (names from `mcp_servers`) whose tools this turn offers the model, as `chat --mcp` does; their
   * tools ask for approval unless the server's entry `allow`s them.
   */
  mcp_servers: f.optionalNames("mcp_servers"),
}));

/** Runs a registered program with `input`. */
export const runFrame = frame("run", (f) => ({
  session_id: f.optionalSessionId(),
  program: f.text("program"),
  input: f.anyJson("input"),
  /** Every tool call of this turn runs without asking, also those of tools declared `needsApproval`. */
  approve_tools: f.optionalBoolean("approve_tools"),
}));

/**
 * Answers a pending question. `session_id` (the `question` frame's) is needed for a question whose asking process
 * is gone (asked before a restart): the answer is recorded and the turn resumed here by replay, like a `resume`.
 */
export const answerFrame = frame("answer", (f) => ({
  session_id: f.optionalSessionId(),
  question_id: f.text("question_id"),
  value: f.answer("value"),
}));

/**
 * Continues the session's latest interrupted, failed, cancelled or waiting turn (or `turn_id`) here, by replay:
 * recorded calls give their recorded results, no model request is repeated. Answered like a `run`.
 */
export const resumeFrame = frame("resume", (f) => ({
  session_id: f.sessionId(),
  turn_id: f.optionalText("turn_id", 128),
}));

/** Declines a pending question; `session_id`, when sent, must be the question's. */
export const declineFrame = frame("decline", (f) => ({
  session_id: f.optionalSessionId(),
  question_id: f.text("question_id"),
  reason: f.optionalText("reason"),
}));

/** Cancels the session's running turn. */
export const stopFrame = frame("stop", (f) => ({ session_id: f.sessionId() }));

/** Receives the session's events (and its pending questions). */
export const subscribeFrame = frame("subscribe", (f) => ({ session_id: f.sessionId() }));

/** Stops receiving the session's events. */
export const unsubscribeFrame = frame("unsubscribe", (f) => ({ session_id: f.sessionId() }));

/** Lists sessions, most recently updated first. */
export const listSessionsFrame = frame("list_sessions", (f) => ({
  limit: f.optionalInteger("limit", 1, 1000),
  offset: f.optionalInteger("offset", 0, Number.MAX_SAFE_INTEGER),
  /** Archived sessions too (hidden otherwise, as Python lists them); each entry says `archived`. */
  include_archived: f.optionalBoolean("include_archived"),
}));

/** Meta, conversation and call nodes of one session. */
export const getSessionFrame = frame("get_session", (f) => ({
  session_id: f.sessionId(),
  /** At most this many nodes (default 1000, at most 5000; a page also stops at 4 MiB of nodes). */
  limit: f.optionalInteger("limit", 1, 5000),
  /** The page of nodes before this `seq` (a previous page's `page.first_seq`); absent: the newest. */
  before_seq: f.optionalInteger("before_seq", 0, Number.MAX_SAFE_INTEGER),
}));

/** Every model request of a session: what the model saw (see the core's describeModelCalls). */
export const getCallsFrame = frame("get_calls", (f) => ({ session_id: f.sessionId() }));

/** Deletes a session that is not running a turn. */
export const deleteSessionFrame = frame("delete_session", (f) => ({ session_id: f.sessionId() }));

/**
 * Archives a session (or with `archived: false` unarchives it) as Python's `set_archived` does (the core's
 * archiveSession): `list_sessions` hides it from then on. Answered with `session_archived`, to its subscribers too.
 */
export const archiveSessionFrame = frame("archive_session", (f) => ({
  session_id: f.sessionId(),
  /** Default true; false unarchives. */
  archived: f.optionalBoolean("archived"),
}));

/**
 * Compacts a session now: the model summarises its history except the most recent turns (the core's
 * compactSession). Answered with `compacted`; its subscribers get `compaction` frames and the summary's `node` frame.
 */
export const compactFrame = frame("compact", (f) => ({
  session_id: f.sessionId(),
  /** Tokens of recent conversation kept verbatim (default: the configuration's). */
  keep_recent_tokens: f.optionalInteger("keep_recent_tokens", 0, Number.MAX_SAFE_INTEGER),
}));

/** Lists the programs a `run` frame may name. */
export const listProgramsFrame = frame("list_programs", () => ({}));

/** Lists the MCP servers whose tools a `chat` frame may enable (`mcp_servers`). */
export const listMcpServersFrame = frame("list_mcp_servers", () => ({}));

/** Lists the session's branch tips; answered with `branches`. */
export const listBranchesFrame = frame("list_branches", (f) => ({ session_id: f.sessionId() }));

/** Moves the session's head to a node of one of its branches; `head_moved` and `branches` follow. */
export const checkoutFrame = frame("checkout", (f) => ({ session_id: f.sessionId(), node_id: f.text("node_id") }));

/** Names a branch tip (meta.json `branches`, as Python OpenProgram keeps names); `branches` follows. */
export const nameBranchFrame = frame("name_branch", (f) => ({
  session_id: f.sessionId(),
  head_id: f.text("head_id"),
  name: f.text("name"),
}));

/** Every client frame's schema, by its `type`. */
export const CLIENT_FRAMES = {
  chat: chatFrame,
  run: runFrame,
  answer: answerFrame,
  resume: resumeFrame,
  decline: declineFrame,
  stop: stopFrame,
  subscribe: subscribeFrame,
  unsubscribe: unsubscribeFrame,
  list_sessions: listSessionsFrame,
  get_session: getSessionFrame,
  get_calls: getCallsFrame,
  delete_session: deleteSessionFrame,
  archive_session: archiveSessionFrame,
  compact: compactFrame,
  list_programs: listProgramsFrame,
  list_mcp_servers: listMcpServersFrame,
  list_branches: listBranchesFrame,
  checkout: checkoutFrame,
  name_branch: nameBranchFrame,
} as const;

/** A parsed frame as the handlers see it: absent and null optional fields both left out. */
export type FrameOf<S extends z.ZodType> = WithoutNull<z.output<S>>;
type WithoutNull<T> = { [K in keyof T]: Exclude<T[K], null> };

/**
 * Parses the fields of a frame of type `action` (known to be one of CLIENT_FRAMES); throws the protocol's error
 * for the first field that is wrong (in the order the schema lists them), as an OpenProgramError with its code.
 */
export function parseFrameFields(action: keyof typeof CLIENT_FRAMES, raw: Record<string, unknown>): unknown {
  const parsed = CLIENT_FRAMES[action].safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0] as z.core.$ZodIssue & { params?: { error?: OpenProgramError } };
    throw issue.params?.error ?? new InvalidInputError(issue.message);
  }
  // What a frame leaves out (or sends as null) is absent, never a key holding null or undefined; a `run`'s input
  // is any JSON value, null included.
  return Object.fromEntries(
    Object.entries(parsed.data).filter(([key, value]) => value !== undefined && (value !== null || key === "input")),
  );
}
