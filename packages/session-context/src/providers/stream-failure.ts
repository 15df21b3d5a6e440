import { CancelledError, ProviderError } from "../errors.js";

/**
 * The error for a reply stream that broke after it started: the connection
 * closed mid-way, a chunk was not JSON, or the server sent an error event.
 * Never retried (the text already streamed would be sent twice); the runtime
 * keeps what arrived as the node's partial output.
 */
export function brokenStreamError(
  provider: string,
  error: unknown,
  received: number,
  signal: AbortSignal,
): CancelledError | ProviderError {
  if (signal.aborted) return new CancelledError(signal.reason);
  if (error instanceof ProviderError) return error;
  const after = `after ${received} characters of the reply`;
  if (error instanceof SyntaxError) {
    return new ProviderError(provider, null, `the stream sent a chunk that is not JSON ${after} (${error.message})`, {
      cause: error,
    });
  }
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | null)?.cause;
  const detail = [error instanceof Error ? error.message : String(error), cause?.code ?? cause?.message]
    .filter((part) => typeof part === "string" && part !== "")
    .join(": ");
  const status = (error as { status?: unknown } | null)?.status;
  if (typeof status === "number" || (error as { error?: unknown } | null)?.error !== undefined) {
    return new ProviderError(
      provider,
      typeof status === "number" ? status : null,
      `the stream reported an error ${after}: ${detail}`,
      {
        cause: error,
      },
    );
  }
  return new ProviderError(provider, null, `the connection broke mid-stream ${after} (${detail})`, { cause: error });
}

/** The error for a stream that ended cleanly but without its end marker: the reply may be cut short. */
export function unfinishedStreamError(provider: string, marker: string, received: number): ProviderError {
  return new ProviderError(
    provider,
    null,
    `the stream ended before the reply finished (no ${marker}) after ${received} characters of the reply`,
  );
}
