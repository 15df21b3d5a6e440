import {
  moduleProgramRef,
  resolveRuntime,
  titleFromProgram,
  validateAgenticInput,
  type Asker,
  type Runtime,
} from "@openprogram/session-context";
import { chooseAsker } from "../asker.js";
import { interruptOnSignals } from "../cancellation.js";
import type { CommandContext } from "../command-context.js";
import { loadProcessRunner } from "../contracts.js";
import { EXIT_CODES } from "../exit-codes.js";
import { readProgramInput, type InputFlags } from "../input.js";
import { isTerminal } from "../io.js";
import { loadProgram } from "../load-program.js";
import { sessionLine, writeLine } from "../output.js";
import { parseProgramSpec } from "../program-spec.js";
import { combineSinks, createProgressPrinter } from "../progress.js";
import { createEventLines } from "../event-lines.js";
import { createStreamingLine } from "../streaming-line.js";
import { reportFailure } from "../report.js";
import { formatResultSafely, jsonLineWithResult } from "../result-output.js";
import { runTurn } from "../run-turn.js";
import { selectSession, type SessionFlags } from "../session-selection.js";

/** Flags of `openprogram run`. */
export interface RunFlags extends InputFlags, SessionFlags {
  answers?: string;
  isolate?: boolean;
  json?: boolean;
  /** Every event of the turn as a JSON line on stdout, then the --json result line. */
  events?: boolean;
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
  /** The title of a session this run creates: the program's call. */
  title: string;
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
    const onEvent = combineSinks([
      flags.events === true ? createEventLines(io.stdout) : undefined,
      // On a terminal: the streaming model call as one line, each finished call as a line; piped: nothing.
      isTerminal(io.stderr) ? createStreamingLine(io.stderr) : undefined,
      isTerminal(io.stderr) ? createProgressPrinter(io.stderr, { calls: true, stages: false }) : undefined,
    ]);
    const { sessionId, runtime, asker, input, execute, programRef, title } = prepared;
    const outcome = await runTurn(
      {
        ...(sessionId !== undefined ? { sessionId } : {}),
        program: { ref: programRef, input },
        title,
        runtime,
        asker,
        signal: interruption.signal,
        ...(onEvent ? { onEvent } : {}),
      },
      () => execute(input),
    );
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
  }
}

async function prepareRun(programArgument: string, flags: RunFlags, { io }: CommandContext): Promise<PreparedRun> {
  const sessionId = await selectSession(flags);
  const input = readProgramInput(flags, io.cwd, io.env);
  const spec = parseProgramSpec(programArgument, io.cwd);
  let execute: Execute;
  let programRef: string;
  let exportName: string;
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
  } else {
    const program = await loadProgram(spec, io.cwd);
    // A schema's refusal before any session exists (the isolated child checks the same in its call).
    await validateAgenticInput(program.fn, input);
    execute = (value) => program.fn(value);
    exportName = program.exportName;
    programRef = moduleProgramRef(spec.modulePath, exportName);
  }
  // Resolved before any session is entered: a broken configuration is a usage error that leaves nothing behind.
  const runtime = resolveRuntime();
  const asker = chooseAsker(io, flags.answers);
  return { sessionId, input, execute, runtime, asker, programRef, title: titleFromProgram(exportName, input) };
}
