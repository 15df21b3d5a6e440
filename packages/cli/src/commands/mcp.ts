import { InvalidInputError } from "@openprogram/session-context";
import { resolveRuntime } from "@openprogram/session-context/runtime";
import { moduleProgramRef } from "@openprogram/session-context/turns";
import type { CommandContext } from "../command-context.js";
import { loadMcp } from "../contracts.js";
import { EXIT_CODES } from "../exit-codes.js";
import { loadProgram } from "../load-program.js";
import { reportFailure } from "../report.js";

/** Flags of `openprogram mcp`. */
export interface McpFlags {
  /** `<module>[#export]`, once per program served. */
  program?: string[];
}

/**
 * `openprogram mcp --program <file>#<export>...` (or the programs of
 * OPENPROGRAM_PROGRAMS, as `serve` takes them): serves the agentic
 * functions as MCP tools over stdin and stdout (what Claude Desktop-style
 * clients start), each call one turn of sessionContext({ source: "mcp" }),
 * recorded with the module's ref so `openprogram resume` and `answer` find the
 * program again. stdout carries only the protocol; messages go to stderr.
 * Ends (exit 0) when the client closes the connection.
 */
export async function mcpCommand(flags: McpFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let served: Awaited<ReturnType<typeof prepare>>;
  try {
    served = await prepare(flags, context);
  } catch (error) {
    return reportFailure(context, error, { json: false, during: "setup" });
  }
  const names = served.programs.map((program) => program.fn.agentic.name).join(", ");
  io.stderr.write(`openprogram mcp: serving ${names} over stdio\n`);
  await served.mcp.serveProgramsOverStdio(
    { programs: served.programs, runtime: served.runtime },
    { stdin: io.stdin, stdout: io.stdout },
  );
  await served.mcp.closeMcpServers();
  return EXIT_CODES.ok;
}

async function prepare(flags: McpFlags, { io }: CommandContext) {
  const specs = programSpecs(flags, io.env);
  if (specs.length === 0)
    throw new InvalidInputError(
      "openprogram mcp needs --program <file>#<export> (once per program to serve), or OPENPROGRAM_PROGRAMS " +
        "(comma-separated <file>#<export>, as for openprogram serve).",
    );
  const programs = [];
  for (const spec of specs) {
    const loaded = await loadProgram(spec, io.cwd);
    programs.push({ fn: loaded.fn, ref: moduleProgramRef(loaded.spec.modulePath, loaded.exportName) });
  }
  // Resolved before serving: a broken configuration is a usage error, said before any client connects.
  const runtime = resolveRuntime();
  return { programs, runtime, mcp: await loadMcp() };
}

/** The programs to serve: `--program` flags, else OPENPROGRAM_PROGRAMS (comma-separated), as `serve` reads them. */
function programSpecs(flags: McpFlags, env: NodeJS.ProcessEnv): string[] {
  if (flags.program && flags.program.length > 0) return flags.program;
  return (env.OPENPROGRAM_PROGRAMS ?? "")
    .split(",")
    .map((spec) => spec.trim())
    .filter((spec) => spec !== "");
}
