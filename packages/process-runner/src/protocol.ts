// The messages parent and child exchange over the IPC channel. Every message
// carries CHANNEL so that a user program calling process.send itself cannot
// be mistaken for the runner.
import type { AskRequest, AskResponse, SerializedError, SessionEvent } from "@openprogram/session-context";
import type { RecordedCallError } from "@openprogram/session-context/recordings";
import type { RelayedProviderInfo } from "@openprogram/session-context/relay";
import type { ModelRequest, ModelResponse, RuntimeDefaults } from "@openprogram/session-context/runtime";

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
  /**
   * The parent records or replays model calls (`--record`, `--replay`): the
   * child sends each of its calls to the parent's provider instead of opening
   * the recording itself. null: the child builds its runtime from configuration.
   */
  modelRelay?: ModelRelayStart | null;
}

/** The parent's runtime, as a child relaying its model calls rebuilds it. */
export interface ModelRelayStart extends RelayedProviderInfo {
  model: string;
  defaults: RuntimeDefaults;
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

/** The request body the parent's provider made for a relayed call (before it went out). */
export interface ModelBodyMessage {
  type: "model_body";
  callId: number;
  body: string;
}

/** A streamed piece of a relayed call's reply, in order. */
export interface ModelTextMessage {
  type: "model_text";
  callId: number;
  text: string;
}

/** A relayed call's end: the reply, or the error it failed with. */
export interface ModelEndMessage {
  type: "model_end";
  callId: number;
  response?: ModelResponse;
  error?: RecordedCallError;
}

/** Parent to child. */
export type ParentMessage =
  | StartMessage
  | AbortMessage
  | AnswerMessage
  | ModelBodyMessage
  | ModelTextMessage
  | ModelEndMessage;

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

/** A model call for the parent's provider (the child relays its calls: StartMessage.modelRelay). */
export interface ModelCallMessage {
  type: "model_call";
  /** The child's own number for the call, echoed in the parent's answers. */
  callId: number;
  request: ModelRequest;
  /** Whether the caller streams. */
  stream: boolean;
}

/** The child's caller gave up on a relayed call. */
export interface ModelCancelMessage {
  type: "model_cancel";
  callId: number;
  reason: string;
}

/** A resumed turn answered this many calls from its record: the parent's replay moves past them. */
export interface ModelSkipMessage {
  type: "model_skip";
  count: number;
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
  | ModelCallMessage
  | ModelCancelMessage
  | ModelSkipMessage
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
  "model_call",
  "model_cancel",
  "model_skip",
  "result",
  "error",
  "load_error",
  "unsendable_result",
]);
const PARENT_TYPES: ReadonlySet<string> = new Set<ParentMessage["type"]>([
  "start",
  "abort",
  "answer",
  "model_body",
  "model_text",
  "model_end",
]);

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
