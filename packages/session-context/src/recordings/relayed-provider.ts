import { CancelledError, ProviderError, RemoteError } from "../errors.js";
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "../providers/types.js";
import { bodyMaker } from "../runtime/recorded-calls.js";
import type { RecordedError } from "./recording-format.js";
import { RecordingProvider } from "./recording-provider.js";
import { ReplayProvider } from "./replay-provider.js";

/**
 * How a child process reaches the provider of the process that holds the
 * recording (the process runner's IPC channel implements it).
 */
export interface ModelCallPort {
  /**
   * Sends one request to be answered by the holder's provider. `stream`:
   * whether the caller streams (a provider may answer differently without).
   * The returned promise settles with the reply, or rejects with the error
   * rebuilt by `errorFromRecorded`.
   */
  call(
    request: ModelRequest,
    handlers: { stream: boolean; signal: AbortSignal; onText: (text: string) => void; onBody: (body: string) => void },
  ): Promise<ModelResponse>;
  /** Calls a resumed turn answered from its record (`ModelProvider.skipCalls`). */
  skip(count: number): void;
}

/** What a child needs to stand in for the holder's provider. */
export interface RelayedProviderInfo {
  /** The holder's provider name ("openai", "scripted", ...): the child serialises request bodies as it does. */
  provider: string;
  maxRetries: number | null;
}

/**
 * A provider whose every call is answered by another process's provider, in
 * the order made: a child process under `--record` or `--replay` uses it so
 * that the one recording file is written (or read) by its holder alone, its
 * calls numbered after the parent's, never truncated or read from the start.
 */
export class RelayedProvider implements ModelProvider {
  readonly name: string;
  readonly maxRetries?: number;
  requestBody?: (request: ModelRequest) => string;

  constructor(
    info: RelayedProviderInfo,
    private readonly port: ModelCallPort,
  ) {
    this.name = info.provider;
    if (info.maxRetries !== null) this.maxRetries = info.maxRetries;
    // The holder's serialiser alone (it never sends): llm nodes get the prompt_sha256 they would have in-process.
    const bodies = bodyMaker(info.provider);
    if (bodies?.requestBody) this.requestBody = (request) => bodies.requestBody!(request);
  }

  complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    if (options.signal.aborted) return Promise.reject(new CancelledError(options.signal.reason));
    const { onText, onRequestBody } = options;
    return this.port.call(request, {
      stream: onText !== undefined,
      signal: options.signal,
      onText: (text) => onText?.(text),
      onBody: (body) => onRequestBody?.(body),
    });
  }

  skipCalls(count: number): void {
    this.port.skip(count);
  }
}

/** True when `provider` writes or reads a recording: a child process must relay its calls to it. */
export function holdsRecording(provider: ModelProvider): boolean {
  return (
    provider instanceof RecordingProvider || provider instanceof ReplayProvider || provider instanceof RelayedProvider
  );
}

/**
 * The error a relayed call failed with, rebuilt: a provider failure as a
 * ProviderError (so the runtime retries it as it would in-process), a
 * cancellation as a CancelledError, anything else keeping its name and code.
 */
export function errorFromRecorded(provider: string, error: RecordedError): Error {
  if (error.code === "provider_error") {
    return new ProviderError(provider, error.status ?? null, error.providerMessage ?? error.message);
  }
  if (error.code === "cancelled") return new CancelledError(error.message);
  return new RemoteError({ name: error.name, code: error.code, message: error.message });
}
