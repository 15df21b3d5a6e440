import { AnswerRequiredError, TurnNotResumableError, type Budgets } from "@openprogram/session-context";
import type { LimitsConfig } from "@openprogram/session-context/budgets";
import { resolveRuntime } from "@openprogram/session-context/runtime";
import { prepareResume, resumeTurn, type PreparedResume } from "@openprogram/session-context/turns";
import { chooseAsker } from "./asker.js";
import { interruptOnSignals } from "./cancellation.js";
import type { CommandContext } from "./command-context.js";
import { EXIT_CODES } from "./exit-codes.js";
import { isTerminal } from "./io.js";
import { mcpTurnTools, type McpTurnTools } from "./mcp-turn-tools.js";
import { formatResult, sessionLine, writeJson, writeLine } from "./output.js";
import { combineSinks, createProgressPrinter } from "./progress.js";
import { reportFailure } from "./report.js";
import { loadRecordedModule, recordedModulePolicy, resolveProgramRef } from "./resume-program.js";
import { runTurn } from "./run-turn.js";
import { createToolLines } from "./tool-lines.js";
import { requireExistingSession } from "./session-selection.js";

/** What to resume, and how. */
export interface ResumeRequest {
  sessionId: string;
  turnId?: string | undefined;
  /** The answer to the pending question, recorded as the turn resumes. */
  answer?: string | undefined;
  questionId?: string | undefined;
  /** `--answers <file>`: answers to the questions the resumed turn asks live. */
  answersFile?: string | undefined;
  /** `--program <module>`: the module the turn recorded, named by the user (so it may be imported). */
  program?: string | undefined;
  json: boolean;
  /** `--mcp`: MCP servers whose tools every exec offers (the ones the turn ran with, for its record to match). */
  mcp?: string[] | undefined;
  /** The resumed turn's budgets (configuration and flags; raise the one that stopped it). */
  budgets?: () => { budgets?: Budgets; limits?: LimitsConfig };
}

/** The --json output of a successful resume. */
export interface ResumeJsonResult {
  ok: true;
  session_id: string;
  created: false;
  /** The new turn that continued the interrupted one. */
  turn_id: string;
  /** The turn it continued. */
  resumed_turn_id: string;
  result: unknown;
}

/**
 * Resumes a turn in this process and prints like `run`: the result on
 * stdout, `session: <id> ...` last on stderr, run's exit codes (75 when
 * another process runs or resumes the turn). Everything is checked first
 * (session, turn, answer, program, a way to answer a waiting question), so a
 * bad request exits 2 and writes nothing. A module the turn recorded is
 * imported only once the core's checkRecordedModule allows it: named with
 * --program, under the working directory, or confirmed on a terminal.
 */
export async function runResume(request: ResumeRequest, context: CommandContext): Promise<number> {
  const { io } = context;
  const { json } = request;
  let prepared: PreparedResume;
  let asker: ReturnType<typeof chooseAsker>;
  let budgets: { budgets?: Budgets; limits?: LimitsConfig };
  let mcp: McpTurnTools;
  try {
    budgets = request.budgets?.() ?? {};
    const sessionId = await requireExistingSession(request.sessionId);
    asker = chooseAsker(io, request.answersFile);
    prepared = await prepareResume({
      sessionId,
      ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
      ...(request.answer !== undefined ? { answer: request.answer } : {}),
      ...(request.questionId !== undefined ? { questionId: request.questionId } : {}),
      resolveProgram: (ref, turn) =>
        loadable(() => resolveProgramRef(ref), ref, `Turn ${turn.turnId} of session '${sessionId}'`),
      modules: recordedModulePolicy(io, request.program),
      loadModule: (module) => loadable(() => loadRecordedModule(module, io.cwd), module.ref, module.turn),
    });
    const { question } = prepared.turn;
    if (question && prepared.answer === undefined && asker === null)
      throw new AnswerRequiredError(sessionId, question.questionId, question.question);
    mcp = await mcpTurnTools(request.mcp, resolveRuntime(), io);
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  const interruption = interruptOnSignals(io);
  try {
    const onEvent = combineSinks([
      isTerminal(io.stderr) ? createProgressPrinter(io.stderr, { calls: true, stages: false }) : undefined,
      createToolLines(io.stderr),
    ]);
    const recorded = prepared.recordedProgram;
    const outcome = await runTurn(
      {
        sessionId: prepared.turn.sessionId,
        runtime: mcp.runtime,
        asker,
        signal: interruption.signal,
        ...(recorded ? { program: recorded } : {}),
        ...(onEvent ? { onEvent } : {}),
        ...budgets,
      },
      () => resumeTurn(prepared),
      io.stderr,
    );
    if (!outcome.ok) {
      return reportFailure(context, outcome.error, {
        json,
        during: "run",
        handle: outcome.handle,
        interruptedExitCode: interruption.exitCode(),
      });
    }
    const { sessionId, turnId } = outcome.handle;
    if (json) {
      const result: ResumeJsonResult = {
        ok: true,
        session_id: sessionId,
        created: false,
        turn_id: turnId,
        resumed_turn_id: prepared.turn.turnId,
        result: outcome.value ?? null,
      };
      writeJson(io.stdout, result);
    } else {
      const text = formatResult(outcome.value);
      if (text !== null) writeLine(io.stdout, text);
    }
    writeLine(io.stderr, sessionLine(sessionId));
    return EXIT_CODES.ok;
  } finally {
    interruption.dispose();
    await mcp.close();
  }
}

/** What `load` finds, or TurnNotResumableError saying that the program `ref` of `turn` cannot be loaded now. */
async function loadable<T>(load: () => Promise<T>, ref: string, turn: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new TurnNotResumableError(`${turn} ran ${ref}, which cannot be loaded now: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
