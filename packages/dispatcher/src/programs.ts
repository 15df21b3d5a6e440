import { InvalidInputError, isAgenticFunction, TurnNotResumableError } from "@openprogram/session-context";
import { validateAgenticInput } from "@openprogram/session-context/host";
import { clipText } from "@openprogram/session-context/messages";
import { registeredProgramRef, type ProgramResolver } from "@openprogram/session-context/turns";
import { UnknownProgramError } from "./errors.js";
import type { ServedProgram } from "./options.js";
import type { ProgramInfo } from "./protocol.js";

/** A program ready to run inside a turn. */
export interface RegisteredProgram {
  readonly info: ProgramInfo;
  /** How its turns record it (`program:<name>`, or the ref given in `programRefs`), so they can be resumed. */
  readonly ref: string;
  /** Throws InvalidInputError before anything is recorded when the input cannot work. */
  checkInput(input: unknown): void;
  /** Rejects with InvalidInputError naming the field when the function's input schema refuses the input. */
  validateInput(input: unknown): Promise<void>;
  /** Runs the program; call inside the turn's session context. */
  invoke(input: unknown): Promise<unknown>;
}

const PROGRAM_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;

/** The registry of programs the web may run, checked once at start. */
export class ProgramRegistry {
  private readonly programs = new Map<string, RegisteredProgram>();
  private readonly byRef = new Map<string, RegisteredProgram>();

  constructor(entries: Record<string, ServedProgram> = {}, refs: Record<string, string> = {}) {
    for (const [name, entry] of Object.entries(entries)) {
      if (!PROGRAM_NAME.test(name)) {
        throw new InvalidInputError(
          `programs: the name ${JSON.stringify(name)} must be 1-64 letters, digits, '_', '.', ':' or '-'.`,
        );
      }
      const program = register(name, entry, refs[name] ?? registeredProgramRef(name));
      this.programs.set(name, program);
      const taken = this.byRef.get(program.ref);
      if (taken)
        throw new InvalidInputError(
          `programRefs: ${taken.info.name} and ${name} both record ${JSON.stringify(program.ref)}; give each program its own ref.`,
        );
      this.byRef.set(program.ref, program);
    }
    for (const [name, ref] of Object.entries(refs)) {
      if (!this.programs.has(name))
        throw new InvalidInputError(
          `programRefs.${name} names no registered program; registered: ${this.names().join(", ") || "none"}.`,
        );
      if (typeof ref !== "string" || ref === "")
        throw new InvalidInputError(
          `programRefs.${name} must be a non-empty string such as "module:/abs/path.mjs#fn".`,
        );
    }
  }

  /** The program whose turns record `ref` (the one a turn to resume names), or null. */
  forRef(ref: string): RegisteredProgram | null {
    return this.byRef.get(ref) ?? null;
  }

  /** The program, or UnknownProgramError naming the registered ones. */
  get(name: string): RegisteredProgram {
    const program = this.programs.get(name);
    if (!program) throw new UnknownProgramError(name, this.names());
    return program;
  }

  /**
   * Finds the program a turn to resume recorded (the core's resolveProgram):
   * only a registered program runs here, never a module named on disk.
   */
  readonly resolveProgram: ProgramResolver = (ref, turn) => {
    const program = this.forRef(ref);
    if (!program) {
      throw new TurnNotResumableError(
        `Turn ${turn.turnId} of session '${turn.sessionId}' ran ${ref}, which this dispatcher does not register ` +
          `(registered: ${this.names().join(", ") || "none"}). Start the dispatcher with that program (openprogram serve --program), ` +
          "or continue the turn with `openprogram resume`.",
      );
    }
    return { run: (input: unknown) => program.invoke(input) };
  };

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.programs.keys()].sort();
  }

  /** What `list_programs` answers. */
  list(): ProgramInfo[] {
    return this.names().map((name) => (this.programs.get(name) as RegisteredProgram).info);
  }
}

function register(name: string, entry: ServedProgram, ref: string): RegisteredProgram {
  if (isAgenticFunction(entry)) {
    const { doc, inputSchema } = entry.agentic;
    const call = entry as unknown as (input: unknown) => Promise<unknown>;
    return {
      info: { name, kind: "agentic", description: firstLine(doc), doc, input_schema: inputSchema },
      ref,
      checkInput(input) {
        if (input !== undefined && (input === null || typeof input !== "object" || Array.isArray(input))) {
          throw new InvalidInputError(
            `run.input of ${name} must be a JSON object (the agentic function's one input object), or absent.`,
          );
        }
      },
      validateInput: async (input) => {
        await validateAgenticInput(entry, input);
      },
      invoke: (input) => call(input),
    };
  }
  if (entry !== null && typeof entry === "object" && typeof (entry as { run?: unknown }).run === "function") {
    const description = (entry as { description?: unknown }).description;
    return {
      info: {
        name,
        kind: "runner",
        description: typeof description === "string" ? description : "",
        doc: "",
        input_schema: null,
      },
      ref,
      checkInput() {},
      validateInput: () => Promise.resolve(),
      invoke: (input) => Promise.resolve(entry.run(input)),
    };
  }
  throw new InvalidInputError(`programs.${name} must be an agentic function or an object with a run(input) method.`);
}

function firstLine(text: string): string {
  return clipText(text.trim().split("\n")[0] ?? "", 200);
}
