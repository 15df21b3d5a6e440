import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "../providers/types.js";
import type { RecordedEvent } from "./recording-format.js";
import { recordedError } from "./recorded-error.js";
import { RecordingWriter } from "./recording-writer.js";

/**
 * Wraps a provider and records every call it makes into a JSONL recording
 * (format: recording-format.ts), passing requests, streamed text, replies and
 * errors through unchanged. The recording starts anew when this is built.
 */
export class RecordingProvider implements ModelProvider {
  readonly name: string;
  /** The wrapped provider's: the runtime retries failed calls as it would without the recording. */
  readonly maxRetries?: number;
  private readonly writer: RecordingWriter;
  private calls = 0;

  constructor(
    private readonly inner: ModelProvider,
    readonly path: string,
  ) {
    this.name = inner.name;
    if (inner.maxRetries !== undefined) this.maxRetries = inner.maxRetries;
    this.writer = new RecordingWriter(path, inner.name, inner.maxRetries);
    if (inner.requestBody) this.requestBody = (request) => inner.requestBody!(request);
  }

  requestBody?: (request: ModelRequest) => string;

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    const callIndex = this.calls++;
    const { writer } = this;
    writer.write({
      type: "request",
      call_index: callIndex,
      model: request.model,
      provider: this.name,
      request,
      timestamp: Date.now(),
    });
    let events = 0;
    const record = (event: RecordedEvent): void =>
      writer.write({ type: "event", call_index: callIndex, event_index: events++, event, timestamp: Date.now() });
    const { onText } = options;
    const end = (): void => {
      writer.write({ type: "call_end", call_index: callIndex, event_count: events });
      writer.flush();
    };
    try {
      const response = await this.inner.complete(request, {
        ...options,
        // Only when the caller streams: a provider may answer differently without onText.
        onText: onText
          ? (text) => {
              record({ type: "text", text });
              onText(text);
            }
          : undefined,
      });
      record({ type: "response", response });
      end();
      return response;
    } catch (error) {
      record({ type: "error", error: recordedError(error) });
      end();
      throw error;
    }
  }

  /** Calls a resumed turn answered from its own record: nothing was asked, so nothing is recorded. */
  skipCalls(count: number): void {
    this.inner.skipCalls?.(count);
  }

  /** Flushes and closes the file; later calls are passed through unrecorded. */
  close(): void {
    this.writer.close();
  }
}
