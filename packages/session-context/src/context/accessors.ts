import type { Asker } from "../ask/types.js";
import { SessionContextMissingError } from "../errors.js";
import type { Runtime } from "../runtime/types.js";
import type { SessionNodeWriter } from "../store/node-writer.js";
import { activeContext } from "./storage.js";
import type { ActiveContext } from "./types.js";

/** The installed context; throws SessionContextMissingError naming `what` needed it. */
export function requireContext(what: string): ActiveContext {
  const context = activeContext();
  if (!context) throw new SessionContextMissingError(what);
  return context;
}

/** What `currentSession()` tells about the installed session. */
export interface CurrentSession {
  sessionId: string;
  /** The handle deeper code records nodes through. */
  writer: SessionNodeWriter;
  /** The entry that installed the context ("cli", "web", ...). */
  source: string;
  /** The store's sessions root (where no other files belong). */
  sessionsRoot: string;
}

/** The current session. Throws SessionContextMissingError when none is installed. */
export function currentSession(): CurrentSession {
  return describe(requireContext("currentSession()"));
}

/** Like currentSession(), but undefined when no context is installed. */
export function currentSessionIfAny(): CurrentSession | undefined {
  const context = activeContext();
  return context ? describe(context) : undefined;
}

function describe(context: ActiveContext): CurrentSession {
  return {
    sessionId: context.sessionId,
    writer: context.writer,
    source: context.source,
    sessionsRoot: context.db.root,
  };
}

/** The current turn's id. Throws when no context is installed. */
export function currentTurnId(): string {
  return requireContext("currentTurnId()").turn.turnId;
}

/** The current runtime (null when no provider is configured). Throws when no context is installed. */
export function currentRuntime(): Runtime | null {
  return requireContext("currentRuntime()").runtime;
}

/**
 * Id of the executing agentic call, or of the calling node in a parent
 * process; null at the top level. Throws when no context is installed.
 */
export function currentCallId(): string | null {
  const context = requireContext("currentCallId()");
  return callIdOf(context);
}

/** The asker of this entry, or null; adapters relay questions through it. */
export function currentAsker(): Asker | null {
  return requireContext("currentAsker()").asker;
}

/** The context's cancellation signal. */
export function currentSignal(): AbortSignal {
  return requireContext("currentSignal()").signal;
}

/** True when a session context is installed. */
export function hasSessionContext(): boolean {
  return activeContext() !== undefined;
}

/** The node new calls hang under in this context ("" and null both mean top level). */
export function callIdOf(context: ActiveContext): string | null {
  if (context.call) return context.call.id;
  return context.callerId ? context.callerId : null;
}
