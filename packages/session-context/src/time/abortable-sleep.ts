import { CancelledError } from "../errors.js";

/** Waits `ms` milliseconds; rejects with CancelledError as soon as `signal` aborts (at once if it already has). */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new CancelledError(signal.reason));
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CancelledError(signal.reason));
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
