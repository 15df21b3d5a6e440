import { CancelledError, ProviderError } from "../errors.js";
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "../providers/types.js";
import { bodyMaker } from "../runtime/recorded-calls.js";
import { firstDifference } from "./first-difference.js";
import { readRecording, type Recording } from "./read-recording.js";
import { ReplayedFailureError, ReplayExhaustedError, ReplayMismatchError } from "./recording-errors.js";
import type { RecordedError } from "./recording-format.js";
import { removeSecretValues } from "./redact.js";
import { abortableSleep } from "../time/abortable-sleep.js";

/** Options of a ReplayProvider. */
export interface ReplayOptions {
  /**
   * Deliver each call's events at the pace they were recorded: the gaps
   * between the request and each event, as the recording's timestamps say
   * (the time between calls is the program's own). Default false: at once.
   * Recordings without timestamps replay at once either way.
   */
  pace?: boolean;
}

/**
 * Answers every provider call from a recording, in order, with no network
 * client at all. Each incoming request is redacted as the recording was and
 * compared with the recorded one at the same call index; the first
 * difference is a ReplayMismatchError. Streamed text is replayed in its
 * recorded pieces, so streaming callers see what they saw live.
 */
export class ReplayProvider implements ModelProvider {
  readonly name: string;
  /** As recorded: a recorded failure is retried as the live run retried it, answered by the next recorded call. */
  readonly maxRetries?: number;
  readonly recording: Recording;
  private calls = 0;
  private readonly bodies: ModelProvider | null;

  readonly pace: boolean;

  constructor(pathOrRecording: string | Recording, options: ReplayOptions = {}) {
    this.pace = options.pace === true;
    this.recording = typeof pathOrRecording === "string" ? readRecording(pathOrRecording) : pathOrRecording;
    this.name = this.recording.provider ?? "replay";
    if (this.recording.maxRetries !== undefined) this.maxRetries = this.recording.maxRetries;
    // The recorded provider's serialiser alone (it never sends): llm nodes get the prompt_sha256 they had live.
    this.bodies = bodyMaker(this.recording.provider);
    if (this.bodies?.requestBody) {
      const { bodies } = this;
      this.requestBody = (request) => bodies.requestBody!(request);
    }
  }

  requestBody?: (request: ModelRequest) => string;

  /** How many calls were answered so far (skipped ones included). */
  get callsReplayed(): number {
    return this.calls;
  }

  /**
   * A resumed turn answered `count` calls from the session's own record, so
   * the program never asks them here: the next call is compared with the
   * recorded call after them.
   */
  skipCalls(count: number): void {
    if (Number.isInteger(count) && count > 0) this.calls += count;
  }

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    if (options.signal.aborted) throw new CancelledError(options.signal.reason);
    const callIndex = this.calls++;
    const { path, calls } = this.recording;
    const call = calls[callIndex];
    if (!call) throw new ReplayExhaustedError(path, callIndex, calls.length);
    const incoming = removeSecretValues(JSON.parse(JSON.stringify(request)));
    const difference = firstDifference(comparable(call.request), comparable(incoming));
    if (difference) {
      throw new ReplayMismatchError(path, callIndex, difference.path, difference.recorded, difference.incoming);
    }
    const body = this.requestBody?.(request);
    if (body !== undefined) options.onRequestBody?.(body);
    const started = performance.now();
    for (const [index, event] of call.events.entries()) {
      if (this.pace) await paced(call.times.request, call.times.events[index] ?? null, started, options.signal);
      if (options.signal.aborted) throw new CancelledError(options.signal.reason);
      if (event.type === "text") options.onText?.(event.text);
      else if (event.type === "response") return event.response;
      else throw replayedError(call.provider, event.error);
    }
    throw new ReplayedFailureError("internal_error", `call ${callIndex} of ${path} recorded no response`);
  }
}

/** Waits until the event is as far from the call's start as it was when recorded. */
async function paced(
  requestAt: number | null,
  eventAt: number | null,
  started: number,
  signal: AbortSignal,
): Promise<void> {
  if (requestAt === null || eventAt === null) return;
  const wait = eventAt - requestAt - (performance.now() - started);
  if (wait > 0) await abortableSleep(wait, signal);
}

// An attachment is named in the message text by its copy in the session's workdir, whose path holds the
// session's id: a new session per run, so the path differs on every run and says nothing about the program.
const SESSION_ATTACHMENT_PATH = /[^\s"]*\/workdir\/attachments\//g;

/** The value as compared: attachment paths without the session they were copied into. */
function comparable(value: unknown): unknown {
  if (typeof value === "string") return value.replace(SESSION_ATTACHMENT_PATH, "<session>/workdir/attachments/");
  if (Array.isArray(value)) return value.map(comparable);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, comparable(item)]));
  }
  return value;
}

function replayedError(provider: string, error: RecordedError): Error {
  if (error.code === "provider_error") {
    return new ProviderError(provider, error.status ?? null, error.providerMessage ?? error.message);
  }
  return new ReplayedFailureError(error.code, error.message);
}
