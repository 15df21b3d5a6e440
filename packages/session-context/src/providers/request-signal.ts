/**
 * A signal for one provider request, linked to the caller's. The provider SDKs
 * add an "abort" listener to the signal they are given and never remove it;
 * handing them the context's long-lived signal would pile up one listener per
 * request (a leak in a long-running dispatcher). Call `release()` when the
 * request is over.
 */
export function requestSignal(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  if (parent.aborted) {
    controller.abort(parent.reason);
    return { signal: controller.signal, release: () => undefined };
  }
  const forward = (): void => controller.abort(parent.reason);
  parent.addEventListener("abort", forward, { once: true });
  return { signal: controller.signal, release: () => parent.removeEventListener("abort", forward) };
}
