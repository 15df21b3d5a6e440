// Exports that are not agentic functions.
/** A plain async function. */
export async function plainFunction(): Promise<string> {
  return "not recorded";
}

/** Not a function at all. */
export const settings = { retries: 3 };
