// @openprogram/cli: the `openprogram` command line. The binary is dist/bin.js;
// this entry exposes main() and the pieces other tools may reuse.

export { main } from "./main.js";
export { buildProgram, type ResultSlot } from "./program.js";
export type { CommandContext, CommandResult } from "./command-context.js";
export { loadProgram, type LoadedProgram } from "./load-program.js";
export { parseProgramSpec, JAVASCRIPT_EXTENSIONS, TYPESCRIPT_EXTENSIONS, type ProgramSpec } from "./program-spec.js";
export {
  EXIT_CODES,
  EXIT_CODES_BY_ERROR,
  exitCodeForError,
  type ExitCode,
  type ExitCodes,
  type KnownErrorCode,
} from "./exit-codes.js";
export { processIo, type CliIo } from "./io.js";
export { PackageUnavailableError, type CliErrorCode } from "./errors.js";
export type { RunFlags, RunJsonResult } from "./commands/run.js";
export type { ChatFlags, ChatJsonTurn } from "./commands/chat.js";
export type { ResearchFlags, ResearchJsonResult } from "./commands/research.js";
export type { ResumeFlags } from "./commands/resume.js";
export type { AnswerFlags, AnswerJsonResult } from "./commands/answer.js";
export type { ResumeJsonResult } from "./run-resume.js";
export type { JsonFailure, TurnFields } from "./report.js";
