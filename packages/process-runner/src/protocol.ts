// The messages parent and child exchange over the IPC channel. Every message
// carries CHANNEL so that a user program calling process.send itself cannot
// be mistaken for the runner.
import type { AskRequest, AskResponse, SerializedError, SessionEvent } from "@openprogram/session-context";

/** Tag on every runner message. */
export const CHANNEL = "openprogram.process-runner";

/** The first message: what to run and how. */
export interface StartMessage {
  type: "start";
  /** file: URL of the user's module. */
  moduleUrl: string;
  /** The export to run; null: the core's rule picks it (`resolveAgenticExport`). */
  exportName: string | null;
  input: unknown;
  /** file: URL of tsx's ESM API to register before importing a TypeScript module; null for JavaScript. */
  typeScriptLoader: string | null;
  /** False when the parent has no asker: the child installs none, exactly as in-process. */
  hasAsker: boolean;
  /** How long the child waits for its own work to settle after losing its parent. */
  graceMs: number;
}

/** Abort the child's signal (graceful stop). */
export interface AbortMessage {
  type: "abort";
  reason: string;
  /** The parent's turn is suspended, not cancelled (a server shutting down): a question waiting stays waiting. */
  suspend?: boolean;
}

/** The parent's asker answered (or failed to answer) a relayed question. */
export interface AnswerMessage {
  type: "answer";
  questionId: string;
  response?: AskResponse;
  error?: SerializedError;
}

/** Parent to child. */
export type ParentMessage = StartMessage | AbortMessage | AnswerMessage;

/** A session event from the child's context, in order. */
export interface EventMessage {
  type: "event";
  event: SessionEvent;
}

/** askUser in the child needs the parent's asker. */
export interface AskMessage {
  type: "ask";
  request: AskRequest;
}

/** The child stopped waiting for an answer (timeout, cancellation). */
export interface AskCancelMessage {
  type: "ask_cancel";
  questionId: string;
}

/** The function returned; `value` is absent when it returned undefined. */
export interface ResultMessage {
  type: "result";
  value?: unknown;
}

/** The function (or the child's context) threw. */
export interface ErrorMessage {
  type: "error";
  error: SerializedError;
}

/** Why the program could not be loaded (no such export, several candidates: unusable_export); nothing ran. */
export type LoadFailure = "import_failed" | "unusable_export" | "not_agentic";

/** The module or its export could not be used; sent before anything runs. */
export interface LoadErrorMessage {
  type: "load_error";
  kind: LoadFailure;
  message: string;
}

/** The function returned a value JSON cannot carry (a bigint, a cycle). */
export interface UnsendableResultMessage {
  type: "unsendable_result";
  message: string;
}

/** Child to parent. */
export type ChildMessage =
  | EventMessage
  | AskMessage
  | AskCancelMessage
  | ResultMessage
  | ErrorMessage
  | LoadErrorMessage
  | UnsendableResultMessage;

/** A message as sent on the wire. */
export type Tagged<M> = M & { channel: typeof CHANNEL };

/** Adds the channel tag. */
export function tag<M extends ParentMessage | ChildMessage>(message: M): Tagged<M> {
  return { ...message, channel: CHANNEL };
}

const CHILD_TYPES: ReadonlySet<string> = new Set<ChildMessage["type"]>([
  "event",
  "ask",
  "ask_cancel",
  "result",
  "error",
  "load_error",
  "unsendable_result",
]);
const PARENT_TYPES: ReadonlySet<string> = new Set<ParentMessage["type"]>(["start", "abort", "answer"]);

/** True for a runner message from the child (anything else on the channel is the user's). */
export function isChildMessage(value: unknown): value is Tagged<ChildMessage> {
  return isTagged(value) && CHILD_TYPES.has(value.type);
}

/** True for a runner message from the parent. */
export function isParentMessage(value: unknown): value is Tagged<ParentMessage> {
  return isTagged(value) && PARENT_TYPES.has(value.type);
}

function isTagged(value: unknown): value is { channel: string; type: string } {
  if (value === null || typeof value !== "object") return false;
  const record = value as { channel?: unknown; type?: unknown };
  return record.channel === CHANNEL && typeof record.type === "string";
}
