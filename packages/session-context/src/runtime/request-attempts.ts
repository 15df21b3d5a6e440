import { CancelledError, InvalidInputError, ModelTimeoutError, ProviderError } from "../errors.js";
import { abortableSleep } from "../time/abortable-sleep.js";

/** One retry about to happen, as `onRetry` and the `retry` event see it. */
export interface RetryInfo {
  /** The request about to be sent again: 2 for the first retry. */
  attempt: number;
  /** The wait before it (the provider's `retry-after` when it sent one). */
  delayMs: number;
  /** Why: the failure of the request before it. */
  reason: string;
}

/** How one model call's requests are retried, and the deadline of the exec it belongs to. */
export interface RetrySettings {
  /** Retries after the first request (retryable failures only: 429, 408, 5xx, a connection that failed). */
  maxRetries: number;
  /** The exec's `timeoutMs`, or null for none. */
  timeoutMs: number | null;
  /** When the exec's time runs out (`Date.now()` milliseconds), or null. */
  deadline: number | null;
  onRetry?: ((info: RetryInfo) => void) | undefined;
  /** The exec's requests so far, counted across its model calls (what its ModelTimeoutError reports). */
  requests?: { sent: number };
}

/** The first backoff and its ceiling: doubled per retry, less up to a quarter of jitter (as the SDKs wait). */
const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A `retry-after` longer than this is not waited for: the failure is reported instead. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The requests of one model call: each goes out with the call's signal cut at
 * the exec's deadline; after a retryable failure (and nothing streamed yet) the
 * next waits its backoff, unless the deadline would pass first, which is a
 * ModelTimeoutError at once.
 */
export class RequestAttempts {
  private sent = 0;
  private readonly deadlineSignal: AbortSignal | null;

  constructor(
    private readonly settings: RetrySettings,
    private readonly callSignal: AbortSignal,
  ) {
    const left = settings.deadline === null ? null : settings.deadline - Date.now();
    this.deadlineSignal = left === null ? null : AbortSignal.timeout(Math.max(0, left));
  }

  /** The signal of the next request; throws ModelTimeoutError when the deadline has passed. */
  begin(): AbortSignal {
    if (this.deadlineSignal?.aborted) throw this.timeout(undefined);
    this.sent++;
    if (this.settings.requests) this.settings.requests.sent++;
    return this.signal();
  }

  /**
   * After a failed request: the retry to make, or the error to throw (a
   * request cut by the deadline, or a retry whose wait would pass it, is a
   * ModelTimeoutError).
   */
  next(error: unknown, streamed: boolean): { retry: RetryInfo } | { fail: unknown } {
    if (this.callSignal.aborted) return { fail: error };
    if (this.deadlineSignal?.aborted) return { fail: this.timeout(error) };
    if (streamed || this.sent > this.settings.maxRetries || !isRetryable(error)) return { fail: error };
    const delayMs = retryAfterMs(error) ?? backoffMs(this.sent);
    if (delayMs > MAX_RETRY_AFTER_MS) return { fail: error };
    if (this.settings.deadline !== null && Date.now() + delayMs >= this.settings.deadline)
      return { fail: this.timeout(error) };
    return { retry: { attempt: this.sent + 1, delayMs, reason: (error as Error).message } };
  }

  /** The backoff before a retry; the deadline cuts it short with ModelTimeoutError. */
  async wait(retry: RetryInfo): Promise<void> {
    try {
      await abortableSleep(retry.delayMs, this.signal());
    } catch (error) {
      if (this.deadlineSignal?.aborted && !this.callSignal.aborted) throw this.timeout(error);
      throw error;
    }
  }

  private signal(): AbortSignal {
    return this.deadlineSignal ? AbortSignal.any([this.callSignal, this.deadlineSignal]) : this.callSignal;
  }

  private timeout(cause: unknown): ModelTimeoutError {
    const last = cause instanceof CancelledError ? undefined : cause;
    const sent = this.settings.requests?.sent ?? this.sent; // the exec's, when this call is one of several
    return new ModelTimeoutError(this.settings.timeoutMs ?? 0, sent, last === undefined ? {} : { cause: last });
  }
}

/** Worth sending again: rate limits, timeouts, server errors, and requests that never got an HTTP answer. */
export function isRetryable(error: unknown): boolean {
  if (!(error instanceof ProviderError)) return false;
  const status = error.status;
  return status === null || status === 408 || status === 409 || status === 429 || status >= 500;
}

function backoffMs(retry: number): number {
  const full = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (retry - 1));
  return Math.round(full * (1 - Math.random() * 0.25));
}

/** The provider's `retry-after-ms` or `retry-after` (seconds or an HTTP date), from the SDK error's headers. */
function retryAfterMs(error: unknown): number | null {
  const headers = ((error as { cause?: { headers?: unknown } }).cause?.headers ?? null) as
    | { get?: (name: string) => string | null }
    | Record<string, string>
    | null;
  if (headers === null || typeof headers !== "object") return null;
  const header = (name: string): string | null =>
    typeof headers.get === "function"
      ? (headers as { get: (name: string) => string | null }).get(name)
      : ((headers as Record<string, string>)[name] ?? null);
  const millis = Number(header("retry-after-ms"));
  if (header("retry-after-ms") !== null && Number.isFinite(millis) && millis >= 0) return millis;
  const value = header("retry-after");
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/**
 * The retry settings of an exec's requests, checked before anything is sent;
 * `startedAt` (`Date.now()`) starts the deadline, shared by all of them.
 */
export function retrySettingsOf(
  options: { timeoutMs?: number | undefined; maxRetries?: number | undefined; onRetry?: RetrySettings["onRetry"] },
  providerRetries: number | undefined,
  startedAt: number,
): RetrySettings {
  const { timeoutMs, maxRetries } = options;
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0 && Number.isFinite(timeoutMs)))
    throw new InvalidInputError(`timeoutMs must be a number of milliseconds above 0, not ${String(timeoutMs)}.`);
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0))
    throw new InvalidInputError(`maxRetries must be a whole number of 0 or more, not ${String(maxRetries)}.`);
  return {
    maxRetries: maxRetries ?? providerRetries ?? 0,
    timeoutMs: timeoutMs ?? null,
    deadline: timeoutMs === undefined ? null : startedAt + timeoutMs,
    onRetry: options.onRetry,
    requests: { sent: 0 },
  };
}

/**
 * A provider request outside an llm node (a compaction's summary), retried as
 * ModelCall retries its requests (the SDKs do not): the provider's
 * `maxRetries`, no events, no deadline.
 */
export async function sendWithRetries<T>(
  maxRetries: number,
  signal: AbortSignal,
  send: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const attempts = new RequestAttempts({ maxRetries, timeoutMs: null, deadline: null }, signal);
  for (;;) {
    try {
      return await send(attempts.begin());
    } catch (error) {
      // Nothing streamed to anyone: a summary's request may be sent again whole.
      const next = attempts.next(error, false);
      if ("fail" in next) throw next.fail;
      await attempts.wait(next.retry);
    }
  }
}
