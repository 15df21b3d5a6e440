import { InvalidInputError, type AgenticFunction, type JsonSchemaObject } from "@openprogram/session-context";
import { validateAgenticInput } from "@openprogram/session-context/host";

/** One agentic function to serve, and how a resumed turn finds it again (see `moduleProgramRef`). */
export interface ServedFunction {
  fn: AgenticFunction<unknown, unknown>;
  /** Recorded on each turn so `openprogram resume` can continue it; absent: the turn is not resumable by ref. */
  ref?: string;
}

/** Any program to serve, described by hand (a dispatcher's registered program). */
export interface ServedRunner {
  name: string;
  /** The tool's description. */
  doc: string;
  /** The input's JSON Schema (absent: any object). */
  inputSchema?: JsonSchemaObject | null;
  /** Rejects (InvalidInputError) an input the program cannot take, before anything is recorded. */
  validate?: (input: Record<string, unknown>) => Promise<void>;
  /** Runs the program inside the call's session context. */
  run: (input: Record<string, unknown>) => Promise<unknown>;
  ref?: string;
}

/** What programsServer serves: agentic functions, or programs described by hand. */
export type ServedProgram = ServedFunction | ServedRunner;

/** A served program as the server uses it. */
export interface ProgramEntry {
  name: string;
  doc: string;
  inputSchema: JsonSchemaObject | null;
  validate: (input: Record<string, unknown>) => Promise<void>;
  run: (input: Record<string, unknown>) => Promise<unknown>;
  ref?: string;
}

/** The argument every served tool takes besides the program's own input: the session to continue. */
export const SESSION_ID_ARGUMENT = "session_id";

/** The tool's input schema: the program's, with an optional `session_id`. */
export function servedInputSchema(entry: ProgramEntry): Record<string, unknown> & { type: "object" } {
  const { $schema: _dialect, ...schema } = entry.inputSchema ?? { type: "object" };
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  return {
    ...schema,
    type: "object",
    properties: {
      ...properties,
      [SESSION_ID_ARGUMENT]: {
        type: "string",
        description: "Continue this OpenProgram session (its history is the program's); absent: a new session.",
      },
    },
  };
}

/** The programs by tool name; two with one name cannot be served together. */
export function programsByName(programs: readonly ServedProgram[]): Map<string, ProgramEntry> {
  const byName = new Map<string, ProgramEntry>();
  for (const program of programs) {
    const entry = entryOf(program);
    if (byName.has(entry.name))
      throw new InvalidInputError(`Two programs are named "${entry.name}"; an MCP server's tools need distinct names.`);
    byName.set(entry.name, entry);
  }
  return byName;
}

function entryOf(program: ServedProgram): ProgramEntry {
  const ref = program.ref !== undefined ? { ref: program.ref } : {};
  if ("fn" in program) {
    const { fn } = program;
    return {
      name: fn.agentic.name,
      doc: fn.agentic.doc,
      inputSchema: fn.agentic.inputSchema ?? null,
      validate: async (input) => {
        await validateAgenticInput(fn, input);
      },
      run: (input) => fn(input),
      ...ref,
    };
  }
  return {
    name: program.name,
    doc: program.doc,
    inputSchema: program.inputSchema ?? null,
    validate: program.validate ?? (() => Promise.resolve()),
    run: program.run,
    ...ref,
  };
}
