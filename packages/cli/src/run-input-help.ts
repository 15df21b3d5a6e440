import type { CliIo } from "./io.js";

/**
 * For `openprogram run <module> --help`: the input fields of the function it
 * would run, loaded before the help is printed (commander's help is
 * synchronous; loading a module is not). Null for any other command line.
 */
export async function runInputHelp(argv: readonly string[], io: CliIo): Promise<string | null> {
  const args = argv.slice(2);
  const moduleArgument = args[1];
  if (args[0] !== "run" || !(args.includes("--help") || args.includes("-h"))) return null;
  if (moduleArgument === undefined || moduleArgument.startsWith("-")) return null;
  // Imported here only: plain `--help` never loads the core or tsx.
  const [{ loadProgram }, { formatInputFields }] = await Promise.all([
    import("./load-program.js"),
    import("./input-fields.js"),
  ]);
  try {
    const { fn } = await loadProgram(moduleArgument, io.cwd);
    return formatInputFields(fn.agentic.name, fn.agentic.inputSchema);
  } catch (error) {
    return `\nInput: could not load ${moduleArgument} (${(error as Error).message})\n`;
  }
}
