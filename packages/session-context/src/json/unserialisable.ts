/** What stands in for a turn's result that JSON cannot carry (nested too deep, a BigInt, a cycle). */
export interface UnserialisableResult {
  unserialisable: string;
}

/**
 * The stand-in for a result `JSON.stringify` refused, with its reason. The
 * dispatcher sends it in `turn_done` and the CLI prints it, so both say the
 * same thing; the session keeps the recorded form of the result either way.
 */
export function unserialisableResult(error: unknown): UnserialisableResult {
  const reason = error instanceof Error ? error.message : String(error);
  return {
    unserialisable: `The result could not be represented as JSON (${reason}); the session records it in its stored form (see its nodes).`,
  };
}
