import { InvalidInputError } from "@openprogram/session-context";
import { DEFAULT_MAX_INPUT_BYTES, describeBytes } from "@openprogram/session-context/host";

/** The variable that sets how much the CLI reads from `--input-file` and `--answers`. */
export const MAX_INPUT_BYTES_VARIABLE = "OPENPROGRAM_MAX_INPUT_BYTES";

/** How much `--input-file` and `--answers` may hold, and how errors say to raise it. */
export interface InputLimit {
  maxBytes: number;
  limitHint: string;
}

/**
 * The limit from OPENPROGRAM_MAX_INPUT_BYTES (a positive number of bytes),
 * default 8 MiB. A value that is not one is an InvalidInputError naming the
 * variable.
 */
export function inputLimit(env: NodeJS.ProcessEnv): InputLimit {
  const raw = env[MAX_INPUT_BYTES_VARIABLE]?.trim();
  if (raw === undefined || raw === "")
    return {
      maxBytes: DEFAULT_MAX_INPUT_BYTES,
      limitHint: `set ${MAX_INPUT_BYTES_VARIABLE} to raise it from ${describeBytes(DEFAULT_MAX_INPUT_BYTES)}`,
    };
  const maxBytes = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1) {
    throw new InvalidInputError(
      `${MAX_INPUT_BYTES_VARIABLE} ${JSON.stringify(raw)} must be a positive whole number of bytes (default ${DEFAULT_MAX_INPUT_BYTES}).`,
    );
  }
  return { maxBytes, limitHint: `${MAX_INPUT_BYTES_VARIABLE}=${maxBytes}` };
}
