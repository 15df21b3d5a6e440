/** A session lock's holder touches it every 2 s while it holds it; one untouched this long was left by a killed process. */
export const SESSION_LOCK = { staleMs: 10_000, timeoutMs: 30_000 };
