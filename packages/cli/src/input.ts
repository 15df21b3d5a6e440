import { resolve } from "node:path";
import { InvalidInputError } from "@openprogram/session-context";
import { assertNestingDepth, readTextFileCapped } from "@openprogram/session-context/host";
import { describeValue } from "@openprogram/session-context/messages";
import { inputLimit } from "./input-limit.js";

/** Where a program's input comes from. */
export interface InputFlags {
  /** `--input JSON` */
  input?: string;
  /** `--input-file F` (`-` reads stdin) */
  inputFile?: string;
}

/**
 * The program's input object from `--input` or `--input-file` (`{}` when
 * neither is given). Bad JSON or a value that is not an object is an
 * InvalidInputError naming the flag and the problem (so is nesting deeper than
 * MAX_NESTING_DEPTH, 256 levels); a file (or stdin)
 * larger than OPENPROGRAM_MAX_INPUT_BYTES (default 8 MiB) is an
 * InputTooLargeError, found as soon as the limit is passed.
 */
export function readProgramInput(
  flags: InputFlags,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, unknown> {
  if (flags.input !== undefined && flags.inputFile !== undefined) {
    throw new InvalidInputError("Pass either --input or --input-file, not both.");
  }
  if (flags.input !== undefined) return parseInputObject(flags.input, "--input");
  if (flags.inputFile !== undefined) {
    const fromStdin = flags.inputFile === "-";
    const path = fromStdin ? "- (stdin)" : resolve(cwd, flags.inputFile);
    const text = readTextFileCapped(fromStdin ? 0 : path, { ...inputLimit(env), label: `--input-file ${path}` });
    return parseInputObject(text, `--input-file ${path}`);
  }
  return {};
}

function parseInputObject(text: string, origin: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `${origin} is not valid JSON (${(error as Error).message}). Pass a JSON object, e.g. --input '{"text": "hello"}'.`,
    );
  }
  assertNestingDepth(value, origin);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidInputError(
      `${origin} must be a JSON object (the program's one input object), not ${describeValue(value)}.`,
    );
  }
  return value as Record<string, unknown>;
}
