import { InvalidInputError } from "../errors.js";

/**
 * The program a turn ran, as its entry names it: `ref` is how the entry finds
 * the program again to resume the turn; `input` is what the entry passed it
 * (absent: the top-level call's own input is the program's input).
 */
export interface TurnProgram {
  ref: string;
  input?: unknown;
}

/** The ref of the research harness (`openprogram research`). */
export const RESEARCH_PROGRAM_REF = "research";

const MODULE_PREFIX = "module:";
const REGISTERED_PREFIX = "program:";

/** The ref of `<absolute module path>#<export>` (how the CLI and the process runner name a program). */
export function moduleProgramRef(modulePath: string, exportName: string): string {
  return `${MODULE_PREFIX}${modulePath}#${exportName}`;
}

/** The ref of a program a dispatcher registered under `name`. */
export function registeredProgramRef(name: string): string {
  return `${REGISTERED_PREFIX}${name}`;
}

/** What a ref names: a module export, a registered program, or another entry's own name (e.g. "research"). */
export type ParsedProgramRef =
  | { kind: "module"; modulePath: string; exportName: string }
  | { kind: "registered"; name: string }
  | { kind: "named"; name: string };

/** Reads a ref written by one of the functions above. */
export function parseProgramRef(ref: string): ParsedProgramRef {
  if (ref.startsWith(MODULE_PREFIX)) {
    const rest = ref.slice(MODULE_PREFIX.length);
    const hash = rest.lastIndexOf("#");
    if (hash < 0) return { kind: "module", modulePath: rest, exportName: "default" };
    return { kind: "module", modulePath: rest.slice(0, hash), exportName: rest.slice(hash + 1) };
  }
  if (ref.startsWith(REGISTERED_PREFIX)) return { kind: "registered", name: ref.slice(REGISTERED_PREFIX.length) };
  return { kind: "named", name: ref };
}

/** Checks the `program` option of sessionContext. */
export function checkTurnProgram(program: unknown): TurnProgram {
  const ref = (program as { ref?: unknown } | null)?.ref;
  if (program === null || typeof program !== "object" || typeof ref !== "string" || ref === "") {
    throw new InvalidInputError(
      'sessionContext: program must be { ref, input? }, ref a non-empty string such as "module:/abs/path.mjs#export".',
    );
  }
  return "input" in program ? { ref, input: (program as { input?: unknown }).input } : { ref };
}
