// @openprogram/session-context/host: what a host that runs programs for a user needs (the
// CLI, the dispatcher, the process runner, the MCP server): finding a module's agentic
// function, checking its input, reading what a user hands over within a size limit,
// results JSON cannot carry, and askers for a terminal or an answers file.

export {
  resolveAgenticExport,
  type ResolveAgenticExportOptions,
  type ResolvedAgenticExport,
} from "../agentic/resolve-agentic-export.js";
export { validateAgenticInput } from "../agentic/agentic-function.js";
export type { ProgramEntry } from "../agentic/program-entry.js";
export {
  DEFAULT_MAX_INPUT_BYTES,
  describeBytes,
  readTextFileCapped,
  type ReadCappedOptions,
} from "../input/read-capped.js";
export { unserialisableResult, type UnserialisableResult } from "../json/unserialisable.js";
export { assertNestingDepth, MAX_NESTING_DEPTH } from "../json/nesting-depth.js";
export {
  createScriptedAsker,
  readAnswersFile,
  type ReadAnswersOptions,
  type ScriptedAnswer,
  type ScriptedAsker,
} from "../ask/scripted-asker.js";
export { createTerminalAsker, type TerminalAskerOptions } from "../ask/terminal-asker.js";
