// How a turn's result is printed. A result JSON.stringify refuses (nested
// 20,000 deep, a BigInt, a cycle) is printed as the core's
// unserialisableResult stand-in: exactly what the dispatcher sends in
// turn_done. The turn itself is committed either way.
import { unserialisableResult } from "@openprogram/session-context/host";
import { formatResult } from "./output.js";

/** The result as printed without --json (see formatResult), never throwing. */
export function formatResultSafely(value: unknown): string | null {
  try {
    return formatResult(value);
  } catch (error) {
    return formatResult(unserialisableResult(error));
  }
}

/** One line of JSON for a --json output carrying `result`, the result replaced by the stand-in if it cannot be JSON. */
export function jsonLineWithResult<T extends { result: unknown }>(output: T): string {
  try {
    return `${JSON.stringify(output)}\n`;
  } catch (error) {
    return `${JSON.stringify({ ...output, result: unserialisableResult(error) })}\n`;
  }
}
