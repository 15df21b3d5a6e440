import { InvalidInputError, type OpenProgramError } from "@openprogram/session-context";
import { describeValue } from "@openprogram/session-context/messages";
import { CLIENT_FRAMES, parseFrameFields } from "./client-frames.js";
import { UnknownActionError } from "./errors.js";
import { MAX_CLIENT_MSG_ID_LENGTH, type ClientAction, type ClientFrame } from "./protocol.js";

/** A client frame read and checked, or the problem with it (and what to echo back). */
export type ParsedFrame =
  | { ok: true; frame: ClientFrame }
  | { ok: false; error: OpenProgramError; ref?: string; action?: string };

type Raw = Record<string, unknown>;

/** The actions a client may send, for error messages and the README. */
export const CLIENT_ACTIONS = Object.keys(CLIENT_FRAMES) as ClientAction[];

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
  if (!Object.hasOwn(CLIENT_FRAMES, type)) {
    return failure(
      new UnknownActionError(
        `Unknown action ${JSON.stringify(type.slice(0, 64))}; use one of: ${CLIENT_ACTIONS.join(", ")}.`,
      ),
      ref,
    );
  }
  const action = type as ClientAction;
  try {
    return { ok: true, frame: parseFrameFields(action, raw) as ClientFrame };
  } catch (error) {
    return failure(error as OpenProgramError, ref, action);
  }
}

function failure(error: OpenProgramError, ref?: string, action?: string): ParsedFrame {
  return { ok: false, error, ...(ref !== undefined ? { ref } : {}), ...(action !== undefined ? { action } : {}) };
}
