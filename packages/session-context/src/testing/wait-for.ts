/**
 * Resolves once `check()` holds, polling every `intervalMs`; rejects after
 * `timeoutMs` naming `what`. The timeout is generous on purpose: it is a bound on
 * a hang, never an assertion about speed.
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
  intervalMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
