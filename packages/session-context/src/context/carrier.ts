import { createHash } from "node:crypto";
import { assertValidSessionId } from "../ids.js";
import { activeContext } from "./storage.js";
import { callIdOf } from "./accessors.js";

/** Environment variables that carry a session context into a child process. */
export const CARRIER_VARIABLES = {
  sessionId: "OPENPROGRAM_SESSION_ID",
  turnId: "OPENPROGRAM_TURN_ID",
  callerId: "OPENPROGRAM_CALLER_ID",
  sessionsRoot: "OPENPROGRAM_SESSIONS_ROOT",
  traceparent: "TRACEPARENT",
} as const;

/** What a child process needs to join its parent's turn. */
export interface ContextCarrier {
  sessionId: string;
  turnId: string;
  /** "" when the parent was at the top level of its turn. */
  callerId: string;
  sessionsRoot: string;
  traceparent: string;
}

/**
 * The environment a child process needs to join the current session under the
 * current call: spread it into `spawn`'s `env` and any program in the child
 * that enters `sessionContext()` without an id joins this turn. Also sets a
 * W3C `TRACEPARENT` (trace = the turn, parent span = the calling node).
 * Returns {} outside a session context.
 */
export function contextCarrierEnv(): Record<string, string> {
  const context = activeContext();
  if (!context) return {};
  // Whatever the child records belongs to this turn, which must therefore be committed when it ends.
  context.turn.delegated = true;
  const callerId = callIdOf(context) ?? "";
  return {
    [CARRIER_VARIABLES.sessionId]: context.sessionId,
    [CARRIER_VARIABLES.turnId]: context.turn.turnId,
    [CARRIER_VARIABLES.callerId]: callerId,
    [CARRIER_VARIABLES.sessionsRoot]: context.db.root,
    [CARRIER_VARIABLES.traceparent]: traceparentFor(context.sessionId, context.turn.turnId, callerId),
  };
}

/** The carrier in `env`, or null when there is none; an invalid carried id is an error, not ignored. */
export function readContextCarrier(env: NodeJS.ProcessEnv = process.env): ContextCarrier | null {
  const sessionId = env[CARRIER_VARIABLES.sessionId];
  if (!sessionId) return null;
  assertValidSessionId(sessionId);
  const turnId = env[CARRIER_VARIABLES.turnId];
  const sessionsRoot = env[CARRIER_VARIABLES.sessionsRoot];
  return {
    sessionId,
    turnId: turnId && turnId !== "" ? turnId : "",
    callerId: env[CARRIER_VARIABLES.callerId] ?? "",
    sessionsRoot: sessionsRoot ?? "",
    traceparent: env[CARRIER_VARIABLES.traceparent] ?? "",
  };
}

/** `00-<trace id from the turn>-<span id from the calling node>-01`. */
export function traceparentFor(sessionId: string, turnId: string, callId: string): string {
  const traceId = createHash("sha256").update(`${sessionId}\n${turnId}`).digest("hex").slice(0, 32);
  const spanSource = callId === "" ? `${turnId}:root` : callId;
  const spanId = /^[0-9a-f]{12}$/.test(spanSource)
    ? `0000${spanSource}`
    : createHash("sha256").update(spanSource).digest("hex").slice(0, 16);
  return `00-${traceId}-${spanId}-01`;
}
