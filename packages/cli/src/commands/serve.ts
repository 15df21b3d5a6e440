import { join } from "node:path";
import type { ServedProgram, ServeFlags, ServeOptions } from "@openprogram/dispatcher";
import { InvalidInputError } from "@openprogram/session-context";
import { moduleProgramRef } from "@openprogram/session-context/turns";
import type { CommandContext, CommandResult } from "../command-context.js";
import type { CliIo } from "../io.js";
import { loadDispatcher, loadMcp, loadProcessRunner, loadResearch } from "../contracts.js";
import { loadProgram } from "../load-program.js";
import { parseProgramSpec } from "../program-spec.js";
import { reportFailure } from "../report.js";
import { budgetsOption, type BudgetFlags } from "../budget-flags.js";

/** Flags of `openprogram serve`, as commander parses them. */
export interface ServeCommandFlags extends BudgetFlags {
  host?: string;
  port?: string;
  /** A string with --token, false with --no-token. */
  token?: string | false;
  tokenFile?: string;
  allowedOrigin?: string[];
  program?: string[];
  isolate?: boolean;
  /** MCP servers (mcpServers in the configuration) whose tools the page may enable for a chat turn. */
  mcp?: string[];
  graceMs?: string;
  sessionsRoot?: string;
  maxTurns?: string;
  maxConnections?: string;
  maxConnectionsPerAddress?: string;
  headersTimeoutMs?: string;
  unauthenticatedHeadersTimeoutMs?: string;
  loopbackHealthSlots?: string;
  clusterSecretFile?: string;
  requestTimeoutMs?: string;
  keepAliveTimeoutMs?: string;
  wsIdleTimeoutMs?: string;
  maxUnsentBytes?: string;
  postgres?: string;
  leaseTtlMs?: string;
  pgPoolSize?: string;
  logFormat?: "json" | "human" | "auto";
}

/** The name the built-in research program is registered under. */
export const RESEARCH_PROGRAM = "research";

/**
 * `openprogram serve`: resolves the configuration (flags over environment,
 * through the dispatcher's resolveServeConfig), loads every `--program
 * module#export`, registers `research` plus those programs (each run in a
 * child process with --isolate) and starts the dispatcher's serve(), which
 * prints the banner, logs and handles SIGTERM/SIGINT. Resolves "serving"
 * once listening; setup errors resolve to their exit code.
 */
export async function serveCommand(flags: ServeCommandFlags, context: CommandContext): Promise<CommandResult> {
  try {
    const dispatcher = await loadDispatcher();
    const config = dispatcher.resolveServeConfig(serveFlags(flags), context.io.env);
    const { programs, programRefs } = await loadPrograms(flags, context.io);
    const options: ServeOptions = {
      ...config,
      programs,
      programRefs,
      ...serveBudgets(flags, context.io),
      ...(await serveMcp(flags, context.io)),
      ...(flags.logFormat !== undefined ? { logFormat: flags.logFormat } : {}),
    };
    await dispatcher.serve(options);
    return "serving";
  } catch (error) {
    return reportFailure(context, error, { json: false, during: "setup" });
  }
}

/** The budgets of every served turn, and the provider capacity they share (`providerLimits` to the dispatcher). */
function serveBudgets(flags: ServeCommandFlags, io: CliIo): Pick<ServeOptions, "budgets" | "providerLimits"> {
  const { budgets, limits } = budgetsOption(flags, io);
  return { ...(budgets ? { budgets } : {}), ...(limits ? { providerLimits: limits } : {}) };
}

/**
 * The `--mcp` servers' entries from the configuration (the project's file only once trusted, as `chat --mcp`
 * reads them); an unknown or refused name stops `serve` before it listens.
 */
async function serveMcp(flags: ServeCommandFlags, io: CliIo): Promise<Pick<ServeOptions, "mcpServers">> {
  if (flags.mcp === undefined || flags.mcp.length === 0) return {};
  const mcp = await loadMcp();
  const servers = Object.fromEntries(
    flags.mcp.map((name) => [name, mcp.configuredServer(name, { env: io.env, cwd: io.cwd }).config]),
  );
  return { mcpServers: servers };
}

/** Flags as typed; the dispatcher validates them and names the flag in its errors. */
function serveFlags(flags: ServeCommandFlags): ServeFlags {
  const {
    token,
    allowedOrigin,
    program: _program,
    isolate: _isolate,
    logFormat: _logFormat,
    mcp: _mcp,
    ...withBudgets
  } = flags;
  const {
    maxTurnTokens: _t,
    maxTurnCost: _c,
    maxTurnSeconds: _s,
    maxSessionTokens: _st,
    maxSessionCost: _sc,
    ...rest
  } = withBudgets;
  const given = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  return {
    ...given,
    ...(typeof token === "string" ? { token } : {}),
    ...(token === false ? { noToken: true } : {}),
    ...(allowedOrigin !== undefined ? { allowedOrigins: allowedOrigin } : {}),
  };
}

/**
 * The served programs, and the ref each module's turns record: the one
 * `openprogram run` records for the same module, so either entry continues
 * the other's turns (`resume`, `openprogram answer`).
 */
async function loadPrograms(
  flags: ServeCommandFlags,
  io: CliIo,
): Promise<{ programs: Record<string, ServedProgram>; programRefs: Record<string, string> }> {
  const { cwd } = io;
  const research = await loadResearch();
  // The network chooses the task, never the work dir: research artifacts go to ./research/<session id> of the server.
  const programs: Record<string, ServedProgram> = {
    [RESEARCH_PROGRAM]: research.researchProgram({ workDirRoot: join(cwd, "research") }),
  };
  const programRefs: Record<string, string> = {};
  const origins: Record<string, string> = { [RESEARCH_PROGRAM]: "the built-in research program" };
  const runner = flags.isolate ? await loadProcessRunner() : null;
  for (const raw of programSpecs(flags, io.env)) {
    const spec = parseProgramSpec(raw, cwd);
    // Loaded here even with --isolate: a bad module fails at start, not at its first run, and its declared name and doc label it.
    const program = await loadProgram(spec, cwd);
    const name = program.fn.agentic.name;
    if (origins[name] !== undefined) {
      throw new InvalidInputError(
        `Two programs are named '${name}': --program ${raw} and ${origins[name]}. Give the agentic functions different names.`,
      );
    }
    origins[name] = `--program ${raw}`;
    programRefs[name] = moduleProgramRef(spec.modulePath, program.exportName);
    programs[name] = runner
      ? runner.isolatedProgram({
          module: spec.modulePath,
          export: program.exportName,
          cwd,
          description: program.fn.agentic.doc,
        })
      : program.fn;
  }
  return { programs, programRefs };
}

/**
 * The programs to serve: `--program` flags, else OPENPROGRAM_PROGRAMS
 * (comma-separated `module#export`), so a service manager can configure them
 * through the environment alone.
 */
function programSpecs(flags: ServeCommandFlags, env: CliIo["env"]): string[] {
  if (flags.program && flags.program.length > 0) return flags.program;
  return (env.OPENPROGRAM_PROGRAMS ?? "")
    .split(",")
    .map((spec) => spec.trim())
    .filter((spec) => spec !== "");
}
