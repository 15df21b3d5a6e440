import {
  ProviderConfigError,
  type Asker,
  type Runtime,
  type SessionEvent,
  type SessionHandle,
} from "@openprogram/session-context";
import { validateAgenticInput } from "@openprogram/session-context/host";
import { PROJECT_CONFIG_FILE, resolveRuntime, resolveRuntimeConfig } from "@openprogram/session-context/runtime";
import { titleFromProgram } from "@openprogram/session-context/store";
import { moduleProgramRef } from "@openprogram/session-context/turns";
import { dirname, join, relative } from "node:path";
import { budgetsOption, type BudgetFlags } from "../budget-flags.js";
import { chooseAsker } from "../asker.js";
import { interruptOnSignals } from "../cancellation.js";
import type { CommandContext } from "../command-context.js";
import { loadProcessRunner } from "../contracts.js";
import { EXIT_CODES } from "../exit-codes.js";
import { readProgramInput, type InputFlags } from "../input.js";
import { isTerminal } from "../io.js";
import { loadProgram } from "../load-program.js";
import { mcpTurnTools, type McpTurnTools } from "../mcp-turn-tools.js";
import { sessionLine, writeLine } from "../output.js";
import { parseProgramSpec } from "../program-spec.js";
import { combineSinks, createProgressPrinter } from "../progress.js";
import { createEventLines } from "../event-lines.js";
import { createStreamingLine } from "../streaming-line.js";
import { reportFailure } from "../report.js";
import { createCompactionLines } from "../compaction-lines.js";
import { createToolLines } from "../tool-lines.js";
import { createRetryLines } from "../retry-lines.js";
import { formatResultSafely, jsonLineWithResult } from "../result-output.js";
import { runTurn } from "../run-turn.js";
import { selectSession, type SessionFlags } from "../session-selection.js";

/** Flags of `openprogram run`. */
export interface RunFlags extends InputFlags, SessionFlags, BudgetFlags {
  answers?: string;
  isolate?: boolean;
  json?: boolean;
  /** Every event of the turn as a JSON line on stdout, then the --json result line. */
  events?: boolean;
  /** Every tool call of this turn runs without asking for approval. */
  approveTools?: boolean;
  /** MCP servers (from mcpServers) whose tools every exec of the turn offers the model. */
  mcp?: string[];
}

/** The --json output of a successful run. */
export interface RunJsonResult {
  ok: true;
  session_id: string;
  created: boolean;
  turn_id: string;
  result: unknown;
}

/** Runs the program's function with its input, inside the turn's session context (whose signal cancels it). */
type Execute = (input: Record<string, unknown>) => Promise<unknown>;

/** Everything checked before a session is entered. */
interface PreparedRun {
  sessionId: string | undefined;
  input: Record<string, unknown>;
  execute: Execute;
  runtime: Runtime | null;
  asker: Asker | null;
  /** How the turn records the program, so `openprogram resume` finds it again. */
  programRef: string;
  /** The title of a session this run creates: the function's call, or null when only the child knows its name. */
  title: string | null;
  /** The turn's budgets (configuration and flags). */
  budgets: ReturnType<typeof budgetsOption>;
  /** The MCP servers of --mcp, started; closed when the command ends. */
  mcp: McpTurnTools;
}

/**
 * `openprogram run <module>[#export]`: validates everything first (session,
 * input, module, provider configuration, answers file; exit 2 and nothing
 * created), then runs the agentic function as one turn of
 * sessionContext({ source: "cli" }), in this process or, with --isolate, in a
 * child process through the process runner, inside the same context.
 */
export async function runCommand(programArgument: string, flags: RunFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true || flags.events === true;
  let prepared: PreparedRun;
  try {
    prepared = await prepareRun(programArgument, flags, context);
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  const interruption = interruptOnSignals(io);
  try {
    const { sessionId, asker, input, execute, programRef, title, budgets } = prepared;
    const runtime = prepared.mcp.runtime;
    const naming = title === null ? titleFromFirstCall(input) : null;
    const onEvent = combineSinks([
      flags.events === true ? createEventLines(io.stdout) : undefined,
      // On a terminal: the streaming model call as one line, each finished call as a line; piped: nothing.
      isTerminal(io.stderr) ? createStreamingLine(io.stderr) : undefined,
      isTerminal(io.stderr) ? createProgressPrinter(io.stderr, { calls: true, stages: false }) : undefined,
      createCompactionLines(io.stderr),
      createToolLines(io.stderr),
      createRetryLines(io.stderr),
      naming?.sink,
    ]);
    const outcome = await runTurn(
      {
        ...(sessionId !== undefined ? { sessionId } : {}),
        program: { ref: programRef, input },
        ...(title !== null ? { title } : {}),
        runtime,
        asker,
        ...(flags.approveTools === true ? { approveTools: true } : {}),
        signal: interruption.signal,
        ...(onEvent ? { onEvent } : {}),
        ...budgets,
      },
      (handle) => {
        naming?.entered(handle);
        return execute(input);
      },
      io.stderr,
    );
    await naming?.done();
    if (!outcome.ok) {
      // A refused run (no provider, no asker, a module the child refused) left no session: the core removed it.
      return reportFailure(context, outcome.error, {
        json,
        during: outcome.handle === null || outcome.handle.discarded ? "setup" : "run",
        handle: outcome.handle,
        interruptedExitCode: interruption.exitCode(),
      });
    }
    const { sessionId: id, created, turnId } = outcome.handle;
    if (json) {
      const result: RunJsonResult = {
        ok: true,
        session_id: id,
        created,
        turn_id: turnId,
        result: outcome.value ?? null,
      };
      io.stdout.write(jsonLineWithResult(result));
    } else {
      const text = formatResultSafely(outcome.value);
      if (text !== null) writeLine(io.stdout, text);
    }
    writeLine(io.stderr, sessionLine(id));
    return EXIT_CODES.ok;
  } finally {
    interruption.dispose();
    await prepared.mcp.close();
  }
}

async function prepareRun(programArgument: string, flags: RunFlags, { io }: CommandContext): Promise<PreparedRun> {
  const sessionId = await selectSession(flags);
  const budgets = budgetsOption(flags, io);
  const input = readProgramInput(flags, io.cwd, io.env);
  const spec = parseProgramSpec(programArgument, io.cwd);
  let execute: Execute;
  let programRef: string;
  let exportName: string;
  // Titled by the function's name, as the web titles it (not `default(...)` for a default export).
  let functionName: string | null;
  if (flags.isolate) {
    // The child imports the module and picks the export by the same rule loadProgram uses here.
    const { isolatedProgram } = await loadProcessRunner();
    const program = isolatedProgram({
      module: spec.modulePath,
      ...(spec.exportName !== undefined ? { export: spec.exportName } : {}),
      cwd: io.cwd,
    });
    execute = (value) => program.run(value);
    exportName = spec.exportName ?? "default";
    programRef = moduleProgramRef(spec.modulePath, exportName);
    functionName = null;
  } else {
    const program = await loadProgram(spec, io.cwd);
    // A schema's refusal before any session exists (the isolated child checks the same in its call).
    await validateAgenticInput(program.fn, input);
    execute = (value) => program.fn(value);
    exportName = program.exportName;
    programRef = moduleProgramRef(spec.modulePath, exportName);
    functionName = program.fn.agentic.name;
  }
  // Resolved before any session is entered: a broken configuration is a usage error that leaves nothing behind.
  const runtime = resolveRuntime();
  if (runtime === null) refuseUnreadProjectConfig(spec.modulePath, io.cwd, io.env);
  const asker = chooseAsker(io, flags.answers);
  const title = functionName === null ? null : titleFromProgram(functionName, input);
  // Started last, once everything else is known good: a server that cannot start stops the run before it begins.
  const mcp = await mcpTurnTools(flags.mcp, runtime, io);
  return { sessionId, input, execute, runtime, asker, programRef, title, budgets, mcp };
}

/**
 * Configuration is read from the folder a command runs in. A program run from elsewhere would ask its questions
 * and only then fail for want of the model its own project configures (`openprogram run hello/program.mts`):
 * when no provider is configured here but the program's project names one, nothing starts and the error says why.
 */
function refuseUnreadProjectConfig(modulePath: string, cwd: string, env: NodeJS.ProcessEnv): void {
  const here = resolveRuntimeConfig(env, cwd);
  if (here.explicitlyNone) return;
  const beside = resolveRuntimeConfig(env, dirname(modulePath));
  if (beside.config === null || beside.files.project === null || beside.files.project === here.files.project) return;
  const folder = relative(cwd, dirname(beside.files.project)) || ".";
  throw new ProviderConfigError(
    PROJECT_CONFIG_FILE,
    `No model provider is configured here (${cwd}), but ${join(folder, PROJECT_CONFIG_FILE)} beside the program names one (${beside.config.provider}); ` +
      `configuration is read from the folder you run in. Run it from there (cd ${folder}), or pass --provider, --env-file or OPENPROGRAM_PROVIDER.`,
  );
}

/**
 * With --isolate only the child loads the module and knows the function's name: the session this run creates is
 * titled when the child records its top-level call.
 */
function titleFromFirstCall(input: Record<string, unknown>): {
  sink: (event: SessionEvent) => void;
  entered: (handle: SessionHandle) => void;
  done: () => Promise<void>;
} {
  let handle: SessionHandle | null = null;
  let titling: Promise<unknown> | null = null;
  return {
    entered: (entered) => void (handle = entered),
    sink: (event) => {
      if (titling || !handle?.created || event.type !== "node" || event.op !== "append") return;
      if (event.node.role !== "code" || event.node.caller !== "") return;
      const title = titleFromProgram(event.node.name, input);
      titling = handle.db.updateSession(handle.sessionId, { title }).catch(() => undefined);
    },
    done: async () => void (await titling),
  };
}
