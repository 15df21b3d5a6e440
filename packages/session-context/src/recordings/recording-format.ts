import type { ModelRequest, ModelResponse } from "../providers/types.js";

/**
 * The version of the JSONL layout, as Python OpenProgram's
 * RECORDING_FORMAT_VERSION: replay refuses any other value.
 */
export const RECORDING_FORMAT_VERSION = 1;

/**
 * The first line. `provider` (the recorded provider's name) and `max_retries`
 * (the retries the runtime allowed its calls, so a replay retries a recorded
 * failure as the live run did) are optional metadata readers may ignore.
 */
export interface HeaderLine {
  type: "header";
  format_version: number;
  provider?: string;
  max_retries?: number;
}

/** One provider call begins: the request as the program made it, secrets removed. */
export interface RequestLine {
  type: "request";
  call_index: number;
  model: string;
  /** The provider that answered ("openai", "anthropic", "scripted", ...). */
  provider: string;
  request: ModelRequest;
  /**
   * When the request went out (epoch milliseconds). Wall-clock: never
   * compared on replay; a paced replay (`replayPace`) keeps the gaps between
   * a call's request and its events. Absent in recordings made before it.
   */
  timestamp?: number;
}

/**
 * What happened during a call, in order: each streamed piece of text, then
 * the whole response, or the error the call ended in. These payloads are
 * OpenProgram for TypeScript's own (Python's are its AssistantMessageEvents).
 */
export type RecordedEvent =
  | { type: "text"; text: string }
  | { type: "response"; response: ModelResponse }
  | { type: "error"; error: RecordedError };

/** A failed call's error, enough to raise it again. */
export interface RecordedError {
  name: string;
  code: string;
  message: string;
  /** provider_error: the HTTP status (null: none) and the provider's own message. */
  status?: number | null;
  providerMessage?: string;
}

export interface EventLine {
  type: "event";
  call_index: number;
  event_index: number;
  event: RecordedEvent;
  /** When the event arrived (epoch milliseconds), as on the request line. */
  timestamp?: number;
}

/** The call's stream finished; the count makes a truncated recording visible. */
export interface CallEndLine {
  type: "call_end";
  call_index: number;
  event_count: number;
}

export type RecordingLine = HeaderLine | RequestLine | EventLine | CallEndLine;
