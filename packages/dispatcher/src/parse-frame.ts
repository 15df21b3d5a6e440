import {
  assertNestingDepth,
  assertValidSessionId,
  describeValue,
  InvalidInputError,
  type OpenProgramError,
} from "@openprogram/session-context";
import { UnknownActionError } from "./errors.js";
import { MAX_CLIENT_MSG_ID_LENGTH, type ClientAction, type ClientFrame } from "./protocol.js";

/** A client frame read and checked, or the problem with it (and what to echo back). */
export type ParsedFrame =
  | { ok: true; frame: ClientFrame }
  | { ok: false; error: OpenProgramError; ref?: string; action?: string };

type Raw = Record<string, unknown>;

const ACTIONS: { [A in ClientAction]: (fields: FieldReader) => Extract<ClientFrame, { type: A }> } = {
  chat: (f) => ({
    type: "chat",
    ...f.optionalSessionId(),
    text: f.string("text"),
    ...f.optionalString("from", 128),
    ...f.optionalNames("mcp_servers"),
  }),
  run: (f) => ({
    type: "run",
    ...f.optionalSessionId(),
    program: f.string("program"),
    ...f.anyJson("input"),
    ...f.optionalBoolean("approve_tools"),
  }),
  answer: (f) => ({
    type: "answer",
    ...f.optionalSessionId(),
    question_id: f.string("question_id"),
    value: f.answerValue("value"),
  }),
  resume: (f) => ({ type: "resume", session_id: f.sessionId(), ...f.optionalString("turn_id", 128) }),
  decline: (f) => ({
    type: "decline",
    ...f.optionalSessionId(),
    question_id: f.string("question_id"),
    ...f.optionalString("reason"),
  }),
  stop: (f) => ({ type: "stop", session_id: f.sessionId() }),
  subscribe: (f) => ({ type: "subscribe", session_id: f.sessionId() }),
  unsubscribe: (f) => ({ type: "unsubscribe", session_id: f.sessionId() }),
  list_sessions: (f) => ({
    type: "list_sessions",
    ...f.optionalInteger("limit", 1, 1000),
    ...f.optionalInteger("offset", 0, Number.MAX_SAFE_INTEGER),
    ...f.optionalBoolean("include_archived"),
  }),
  get_session: (f) => ({
    type: "get_session",
    session_id: f.sessionId(),
    ...f.optionalInteger("limit", 1, 5000),
    ...f.optionalInteger("before_seq", 0, Number.MAX_SAFE_INTEGER),
  }),
  get_calls: (f) => ({ type: "get_calls", session_id: f.sessionId() }),
  delete_session: (f) => ({ type: "delete_session", session_id: f.sessionId() }),
  archive_session: (f) => ({ type: "archive_session", session_id: f.sessionId(), ...f.optionalBoolean("archived") }),
  compact: (f) => ({
    type: "compact",
    session_id: f.sessionId(),
    ...f.optionalInteger("keep_recent_tokens", 0, Number.MAX_SAFE_INTEGER),
  }),
  list_programs: () => ({ type: "list_programs" }),
  list_mcp_servers: () => ({ type: "list_mcp_servers" }),
  list_branches: (f) => ({ type: "list_branches", session_id: f.sessionId() }),
  checkout: (f) => ({ type: "checkout", session_id: f.sessionId(), node_id: f.string("node_id") }),
  name_branch: (f) => ({
    type: "name_branch",
    session_id: f.sessionId(),
    head_id: f.string("head_id"),
    name: f.string("name"),
  }),
};

/** The actions a client may send, for error messages and the README. */
export const CLIENT_ACTIONS = Object.keys(ACTIONS) as ClientAction[];

/**
 * Reads one text frame. Every problem (not JSON, not an object, no or an
 * unknown `type`, a missing or mistyped field, an invalid session id) comes
 * back as an error naming it, never as a throw.
 */
export function parseClientFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return failure(
      new InvalidInputError(
        `The frame is not valid JSON (${(error as Error).message}). Send one JSON object per text frame, like {"type":"list_sessions"}.`,
      ),
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return failure(
      new InvalidInputError(`A frame must be a JSON object with a "type" field, not ${describeValue(value)}.`),
    );
  }
  const raw = value as Raw;
  const ref = typeof raw.client_msg_id === "string" ? raw.client_msg_id.slice(0, MAX_CLIENT_MSG_ID_LENGTH) : undefined;
  const type = raw.type;
  if (type === undefined)
    return failure(
      new InvalidInputError(`The frame has no "type" field; use one of: ${CLIENT_ACTIONS.join(", ")}.`),
      ref,
    );
  if (typeof type !== "string")
    return failure(new InvalidInputError(`The frame's "type" must be a string, not ${describeValue(type)}.`), ref);
  if (!Object.hasOwn(ACTIONS, type)) {
    return failure(
      new UnknownActionError(
        `Unknown action ${JSON.stringify(type.slice(0, 64))}; use one of: ${CLIENT_ACTIONS.join(", ")}.`,
      ),
      ref,
    );
  }
  const action = type as ClientAction;
  try {
    const reader = new FieldReader(action, raw);
    const clientMsgId = reader.optionalString("client_msg_id", MAX_CLIENT_MSG_ID_LENGTH);
    return { ok: true, frame: { ...ACTIONS[action](reader), ...clientMsgId } };
  } catch (error) {
    return failure(error as OpenProgramError, ref, action);
  }
}

function failure(error: OpenProgramError, ref?: string, action?: string): ParsedFrame {
  return { ok: false, error, ...(ref !== undefined ? { ref } : {}), ...(action !== undefined ? { action } : {}) };
}

/** Reads the fields of one frame; each problem throws an error naming `<action>.<field>`. */
class FieldReader {
  constructor(
    private readonly action: ClientAction,
    private readonly raw: Raw,
  ) {}

  string(name: string): string {
    const value = this.raw[name];
    if (value === undefined) throw this.missing(name, "a string");
    if (typeof value !== "string") throw this.mistyped(name, "a string", value);
    if (value.trim() === "") throw new InvalidInputError(`${this.action}.${name} is empty; send a non-empty string.`);
    return value;
  }

  answerValue(name: string): string {
    const value = this.raw[name];
    if (value === undefined)
      throw this.missing(name, "a string (the answer, or a choice's 1-based number as a string)");
    if (typeof value !== "string")
      throw this.mistyped(name, "a string (the answer, or a choice's 1-based number as a string)", value);
    return value;
  }

  optionalString<K extends string>(name: K, maxLength = 10_000): Partial<Record<K, string>> {
    const value = this.raw[name];
    if (value === undefined || value === null) return {};
    if (typeof value !== "string") throw this.mistyped(name, "a string", value);
    if (value.length > maxLength)
      throw new InvalidInputError(`${this.action}.${name} is ${value.length} characters long; at most ${maxLength}.`);
    return { [name]: value } as Record<K, string>;
  }

  sessionId(): string {
    const value = this.raw.session_id;
    if (value === undefined || value === null) throw this.missing("session_id", "a session id");
    assertValidSessionId(value);
    return value;
  }

  optionalSessionId(): { session_id?: string } {
    const value = this.raw.session_id;
    if (value === undefined || value === null) return {};
    assertValidSessionId(value);
    return { session_id: value };
  }

  optionalInteger<K extends string>(name: K, min: number, max: number): Partial<Record<K, number>> {
    const value = this.raw[name];
    if (value === undefined || value === null) return {};
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      throw new InvalidInputError(
        `${this.action}.${name} must be an integer from ${min} to ${max}, not ${describeValue(value)}.`,
      );
    }
    return { [name]: value } as Record<K, number>;
  }

  optionalBoolean<K extends string>(name: K): Partial<Record<K, boolean>> {
    const value = this.raw[name];
    if (value === undefined || value === null) return {};
    if (typeof value !== "boolean")
      throw new InvalidInputError(`${this.action}.${name} must be true or false, not ${describeValue(value)}.`);
    return { [name]: value } as Record<K, boolean>;
  }

  /** A list of at most 32 non-empty names of at most 128 characters each. */
  optionalNames<K extends string>(name: K): Partial<Record<K, string[]>> {
    const value = this.raw[name];
    if (value === undefined || value === null) return {};
    if (!Array.isArray(value) || value.length > 32)
      throw new InvalidInputError(
        `${this.action}.${name} must be a list of at most 32 names, not ${describeValue(value)}.`,
      );
    for (const entry of value as unknown[])
      if (typeof entry !== "string" || entry === "" || entry.length > 128)
        throw new InvalidInputError(
          `${this.action}.${name} must hold names (non-empty strings of at most 128 characters), not ${describeValue(entry)}.`,
        );
    return { [name]: value as string[] } as Record<K, string[]>;
  }

  anyJson<K extends string>(name: K): Partial<Record<K, unknown>> {
    assertNestingDepth(this.raw[name], `${this.action}.${name}`);
    return this.raw[name] === undefined ? {} : ({ [name]: this.raw[name] } as Record<K, unknown>);
  }

  private missing(name: string, what: string): InvalidInputError {
    return new InvalidInputError(`${this.action}.${name} is missing; send ${what}.`);
  }

  private mistyped(name: string, what: string, value: unknown): InvalidInputError {
    return new InvalidInputError(`${this.action}.${name} must be ${what}, not ${describeValue(value)}.`);
  }
}
