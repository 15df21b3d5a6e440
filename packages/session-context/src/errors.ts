/**
 * Every error OpenProgram raises on purpose is an `OpenProgramError` with a
 * stable `code`: adapters map codes to exit codes, WebSocket frames and IPC
 * messages, and codes survive crossing a process boundary where classes do not.
 */
export abstract class OpenProgramError extends Error {
  /** Stable, snake_case identifier of the failure; safe to switch on. */
  abstract readonly code: string;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** The shape recorded on nodes and sent over the wire. */
  toJSON(): SerializedError {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** What an error looks like once recorded on a node or sent to another process. */
export interface SerializedError {
  name: string;
  code: string;
  message: string;
  stack?: string;
}

/** An agentic function, askUser or exec was called with no session context installed. */
export class SessionContextMissingError extends OpenProgramError {
  readonly code = "session_context_missing";
  constructor(what: string) {
    super(
      `${what} needs a session context, and none is installed. Wrap the entry point in ` +
        "sessionContext(async (session) => { ... }) from @openprogram/session-context; every entry " +
        "(CLI, web, child process, research, tests) must install one so calls are recorded.",
    );
  }
}

/** A session id that cannot be used as a directory name safely. */
export class InvalidSessionIdError extends OpenProgramError {
  readonly code = "invalid_session_id";
  constructor(
    readonly sessionId: unknown,
    readonly reason: string,
  ) {
    super(
      `Invalid session id ${describeValue(sessionId)}: ${reason}. Session ids are 1-128 characters ` +
        "of letters, digits, '_', '-', '.' and ':', and do not start with '.'.",
    );
  }
}

/** The session does not exist in the store. */
export class SessionNotFoundError extends OpenProgramError {
  readonly code = "session_not_found";
  constructor(
    readonly sessionId: string,
    detail = "",
  ) {
    super(`Session '${sessionId}' does not exist${detail ? `. ${detail}` : "."}`);
  }
}

/** A session with this id already exists where a new one was required. */
export class SessionExistsError extends OpenProgramError {
  readonly code = "session_exists";
  constructor(readonly sessionId: string) {
    super(`Session '${sessionId}' already exists; pass it as sessionId to continue it instead.`);
  }
}

/** A node id that is not in the session. */
export class NodeNotFoundError extends OpenProgramError {
  readonly code = "node_not_found";
  constructor(
    readonly sessionId: string,
    readonly nodeId: string,
  ) {
    super(`Node '${nodeId}' does not exist in session '${sessionId}'.`);
  }
}

/** A node payload that cannot be stored (not JSON-serialisable, too large, bad role). */
export class InvalidNodeError extends OpenProgramError {
  readonly code = "invalid_node";
}

/** The store could not write (read-only root, full disk, permissions). Nothing already written is touched. */
export class StoreWriteError extends OpenProgramError {
  readonly code = "store_write_failed";
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
    super(`Could not write ${path}${errno ? ` (${errno}: ${errnoHint(errno)})` : ""}.`, { cause });
  }
}

/** Another process held a store lock for too long. */
export class StoreLockTimeoutError extends OpenProgramError {
  readonly code = "store_lock_timeout";
  constructor(
    readonly lockPath: string,
    holder: string,
  ) {
    super(
      `Timed out waiting for the store lock ${lockPath} (held by ${holder}). If no OpenProgram ` +
        "process is running, remove the file.",
    );
  }
}

/** A git operation on a session repository failed. */
export class GitError extends OpenProgramError {
  readonly code = "git_failed";
}

/** Two incompatible copies of @openprogram/session-context were loaded into one process. */
export class ContextVersionMismatchError extends OpenProgramError {
  readonly code = "context_version_mismatch";
}

/** No model provider is configured, so runtime.exec cannot run. */
export class RuntimeMissingError extends OpenProgramError {
  readonly code = "runtime_missing";
  constructor(detail = "") {
    super(
      "No model provider is configured" +
        (detail ? ` (${detail})` : "") +
        ". Set OPENPROGRAM_PROVIDER to openai, anthropic or scripted (with OPENAI_API_KEY / " +
        "OPENAI_BASE_URL, ANTHROPIC_API_KEY, or OPENPROGRAM_SCRIPT), or write " +
        '$OPENPROGRAM_HOME/config.json with a "provider" field.',
    );
  }
}

/** The provider configuration is present but unusable; names the variable to fix. */
export class ProviderConfigError extends OpenProgramError {
  readonly code = "provider_config";
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/** The model provider answered with an error or could not be reached. */
export class ProviderError extends OpenProgramError {
  readonly code = "provider_error";
  constructor(
    readonly provider: string,
    readonly status: number | null,
    readonly providerMessage: string,
    options?: { cause?: unknown },
  ) {
    super(`${provider} provider failed${status === null ? "" : ` with HTTP ${status}`}: ${providerMessage}`, options);
  }
}

/** The scripted provider ran out of replies or a reply did not match its request. */
export class ScriptExhaustedError extends OpenProgramError {
  readonly code = "script_exhausted";
}

/** askUser was called but this entry has no way to reach a human. */
export class AskUserUnavailableError extends OpenProgramError {
  readonly code = "ask_user_unavailable";
  constructor(readonly question: string) {
    super(
      `askUser(${JSON.stringify(truncate(question, 80))}) has no asker: this entry cannot reach a ` +
        "human. On the command line run on a terminal or pass --answers <file>; in code pass " +
        "sessionContext({ asker }).",
    );
  }
}

/** The user declined to answer a question. */
export class UserDeclinedError extends OpenProgramError {
  readonly code = "user_declined";
  constructor(readonly question: string) {
    super(`The user declined to answer: ${truncate(question, 120)}`);
  }
}

/** A question was not answered in time and had no default. */
export class AskTimeoutError extends OpenProgramError {
  readonly code = "ask_timeout";
  constructor(
    readonly question: string,
    readonly timeoutMs: number,
  ) {
    super(`No answer within ${timeoutMs} ms to: ${truncate(question, 120)}`);
  }
}

/** An answer that is not one of the offered choices. */
export class InvalidAnswerError extends OpenProgramError {
  readonly code = "invalid_answer";
}

/** The work was cancelled through the context's AbortSignal. */
export class CancelledError extends OpenProgramError {
  readonly code = "cancelled";
  constructor(reason?: unknown) {
    super(`Cancelled${reasonText(reason)}`, { cause: reason });
  }
}

/** The session is already running a turn (one turn at a time per session in a dispatcher), or the turn to resume is being continued elsewhere. */
export class SessionBusyError extends OpenProgramError {
  readonly code = "session_busy";
  constructor(
    readonly sessionId: string,
    detail = "",
  ) {
    super(
      `Session '${sessionId}' is busy${detail ? `: ${detail}` : " with another turn"}; wait for it to finish or stop it.`,
    );
  }
}

/**
 * The abort reason that stops a turn without giving up on it (a server
 * shutting down, Ctrl-C while a question waits): a question then stays
 * `waiting` on disk and the session `needs_input`, so the turn can be resumed.
 */
export class TurnSuspendedError extends OpenProgramError {
  readonly code = "turn_suspended";
}

/** True when an abort reason (or an error caused by one) suspends the turn rather than cancelling it. */
export function isSuspension(reason: unknown): boolean {
  if (hasErrorCode(reason, "turn_suspended")) return true;
  return reason instanceof Error && hasErrorCode(reason.cause, "turn_suspended");
}

/** The session has no turn to resume (none was interrupted, failed or is waiting for an answer). */
export class NothingToResumeError extends OpenProgramError {
  readonly code = "nothing_to_resume";
  constructor(
    readonly sessionId: string,
    detail: string,
  ) {
    super(`Session '${sessionId}' has nothing to resume: ${detail}`);
  }
}

/** A turn id that names no turn of the session. */
export class TurnNotFoundError extends OpenProgramError {
  readonly code = "turn_not_found";
  constructor(
    readonly sessionId: string,
    readonly turnId: string,
    known: readonly string[],
  ) {
    super(
      `Session '${sessionId}' has no turn '${turnId}'.` +
        (known.length > 0
          ? ` Its resumable turns: ${known.join(", ")}.`
          : " It has no turn that recorded what resuming needs."),
    );
  }
}

/** The turn cannot be resumed: its program cannot be found, or its input or result was not recordable. */
export class TurnNotResumableError extends OpenProgramError {
  readonly code = "turn_not_resumable";
}

/** An answer was given but no question of the session is waiting for one. */
export class NoPendingQuestionError extends OpenProgramError {
  readonly code = "no_pending_question";
}

/** The turn to resume waits for an answer, and neither an answer nor an asker was given. */
export class AnswerRequiredError extends OpenProgramError {
  readonly code = "answer_required";
  constructor(
    readonly sessionId: string,
    readonly questionId: string,
    readonly question: string,
  ) {
    super(
      `Turn of session '${sessionId}' is waiting for an answer to ${JSON.stringify(truncate(question, 120))} ` +
        `(question ${questionId}). Pass the answer (resumeTurn({ answer }), \`openprogram answer\`, --answers <file>) ` +
        "or resume from an entry that can ask.",
    );
  }
}

/** A module export that is not an agentic function was asked to run. */
export class NotAgenticFunctionError extends OpenProgramError {
  readonly code = "not_agentic_function";
}

/** Caller input that is not acceptable (bad JSON, wrong shape); says what to fix. */
export class InvalidInputError extends OpenProgramError {
  readonly code = "invalid_input";
}

/** An error that came from another process; keeps the original class name and code. */
export class RemoteError extends OpenProgramError {
  readonly code: string;
  constructor(serialized: SerializedError) {
    super(serialized.message);
    this.code = serialized.code;
    this.name = serialized.name;
    if (serialized.stack) this.stack = serialized.stack;
  }
}

/** An unexpected failure wrapped so that it still has a code. */
export class InternalError extends OpenProgramError {
  readonly code = "internal_error";
}

/** True for errors with a string `code`, including ones from another copy of this package. */
export function hasErrorCode(error: unknown, code?: string): error is Error & { code: string } {
  if (!(error instanceof Error)) return false;
  const value = (error as { code?: unknown }).code;
  return typeof value === "string" && (code === undefined || value === code);
}

/** True when the error means "cancelled", whichever copy or layer raised it. */
export function isCancellation(error: unknown): boolean {
  return hasErrorCode(error, "cancelled") || (error instanceof Error && error.name === "AbortError");
}

/** Turns anything thrown into an OpenProgramError, keeping the original as `cause`. */
export function toOpenProgramError(error: unknown): OpenProgramError {
  if (error instanceof OpenProgramError) return error;
  if (error instanceof Error && error.name === "AbortError") return new CancelledError(error);
  if (hasErrorCode(error) && /^[a-z][a-z0-9_]*$/.test(error.code)) {
    return new RemoteError({ name: error.name, code: error.code, message: error.message });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new InternalError(message, { cause: error });
}

/** The recordable form of any thrown value (user errors keep their class name). */
export function serializeError(error: unknown, options: { stack?: boolean } = {}): SerializedError {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  const code = hasErrorCode(error)
    ? error.code
    : error instanceof Error && error.name === "AbortError"
      ? "cancelled"
      : "error";
  const serialized: SerializedError = { name, code, message };
  if (options.stack && error instanceof Error && error.stack) serialized.stack = error.stack;
  return serialized;
}

/** Rebuilds an error that crossed a process boundary. */
export function deserializeError(serialized: SerializedError): Error {
  return new RemoteError(serialized);
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function describeValue(value: unknown): string {
  if (typeof value !== "string") return `(${value === null ? "null" : typeof value})`;
  return JSON.stringify(truncate(value, 60));
}

function reasonText(reason: unknown): string {
  if (reason === undefined) return "";
  if (reason instanceof Error) return reason.name === "AbortError" ? "" : `: ${reason.message}`;
  return typeof reason === "string" ? `: ${reason}` : "";
}

function errnoHint(errno: string): string {
  switch (errno) {
    case "EROFS":
      return "the sessions root is on a read-only file system";
    case "EACCES":
    case "EPERM":
      return "no permission to write there";
    case "ENOSPC":
      return "the disk is full";
    case "EDQUOT":
      return "the disk quota is exhausted";
    default:
      return "see the cause";
  }
}
