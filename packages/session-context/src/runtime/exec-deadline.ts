import { isCancellation, ModelTimeoutError } from "../errors.js";
import type { RetrySettings } from "./request-attempts.js";

/**
 * An exec's `timeoutMs` over what runs between its requests: the tools a reply
 * asked for (plain tools get it in their signal, agentic ones in their
 * context's). Past the deadline they are interrupted, their nodes recorded
 * `cancelled`, and the exec fails with ModelTimeoutError. The requests
 * themselves are cut by RequestAttempts, from the same deadline.
 */
export class ExecDeadline {
  /** Aborted when the deadline passes; null without a timeoutMs. */
  readonly signal: AbortSignal | null;
  private readonly timer: NodeJS.Timeout | null = null;

  constructor(private readonly retry: RetrySettings) {
    if (retry.deadline === null) {
      this.signal = null;
      return;
    }
    const controller = new AbortController();
    this.signal = controller.signal;
    const reason = `the exec's timeoutMs of ${retry.timeoutMs ?? 0} ms has passed`;
    const left = retry.deadline - Date.now();
    if (left <= 0) controller.abort(reason);
    else this.timer = setTimeout(() => controller.abort(reason), left);
  }

  /** `signal` with the deadline's, when there is one. */
  bound(signal: AbortSignal): AbortSignal {
    return this.signal ? AbortSignal.any([signal, this.signal]) : signal;
  }

  /**
   * What the exec throws for `error`: a cancellation the deadline caused (and
   * not `stopped`, the caller's own signals) becomes ModelTimeoutError.
   */
  errorFor(error: unknown, stopped: boolean): unknown {
    if (!this.signal?.aborted || stopped || !isCancellation(error)) return error;
    return new ModelTimeoutError(this.retry.timeoutMs ?? 0, this.retry.requests?.sent ?? 0, { cause: error });
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
  }
}
