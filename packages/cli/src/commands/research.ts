import { budgetsOption, type BudgetFlags } from "../budget-flags.js";
import { join, resolve } from "node:path";
import {
  AnswerRequiredError,
  hasErrorCode,
  InvalidInputError,
  type Asker,
  type Runtime,
} from "@openprogram/session-context";
import { requireRuntime } from "@openprogram/session-context/runtime";
import { openStore } from "@openprogram/session-context/store";
import {
  describeTurn,
  prepareResume,
  RESEARCH_PROGRAM_REF,
  resumeTurn,
  type PreparedResume,
} from "@openprogram/session-context/turns";
import { chooseAsker } from "../asker.js";
import { interruptOnSignals } from "../cancellation.js";
import type { CommandContext } from "../command-context.js";
import type { ResearchResult, RunResearchResult } from "@openprogram/research";
import { loadResearch, type ResearchModule } from "../contracts.js";
import { EXIT_CODES } from "../exit-codes.js";
import { isTerminal } from "../io.js";
import { sessionLine, writeJson, writeLine } from "../output.js";
import { createProgressPrinter } from "../progress.js";
import { reportFailure } from "../report.js";
import { runTurn } from "../run-turn.js";
import { selectSession, type SessionFlags } from "../session-selection.js";

/** Flags of `openprogram research`. */
export interface ResearchFlags extends SessionFlags, BudgetFlags {
  workDir?: string;
  interactive?: boolean;
  answers?: string;
  sections?: string[];
  json?: boolean;
}

/** The --json output of a successful research run. */
export interface ResearchJsonResult {
  ok: true;
  session_id: string;
  created: boolean;
  turn_id: string;
  /** "completed", or "stopped" when the user declined to choose an idea (the partial artifacts are kept). */
  status: "completed" | "stopped";
  work_dir: string;
  artifacts: string[];
  summary: string;
}

/**
 * `openprogram research "<task>"`: validates the request before any model
 * call (exit 2), then runs the research harness as one turn of
 * `sessionContext({ idPrefix: "research", source: "cli" })`, printing each
 * finished stage on stderr and the artifact paths on stdout.
 */
export async function researchCommand(task: string, flags: ResearchFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  const workDir = flags.workDir !== undefined ? resolve(io.cwd, flags.workDir) : undefined;
  const sections = flags.sections
    ?.flatMap((value) => value.split(","))
    .map((value) => value.trim())
    .filter(Boolean);
  let prepared: {
    sessionId: string | undefined;
    research: ResearchModule;
    runtime: Runtime;
    asker: Asker | null;
    /** The failed run of this task this command continues instead of starting over. */
    resume: PreparedResume | null;
  };
  let budgets: ReturnType<typeof budgetsOption>;
  try {
    budgets = budgetsOption(flags, io);
    const sessionId = await selectSession(flags);
    const research = await loadResearch();
    research.validateResearchRequest(task, {
      ...(workDir !== undefined ? { workDir } : {}),
      ...(sections ? { sections } : {}),
    });
    const runtime = requireRuntime("this command calls the model");
    const asker = chooseAsker(io, flags.answers);
    if (flags.interactive && asker === null) {
      throw new InvalidInputError(
        "--interactive asks you to choose an idea, but stdin is not a terminal: pass --answers <file>, or leave out --interactive.",
      );
    }
    const resume =
      sessionId === undefined ? null : await unfinishedRun(sessionId, task, { workDir, sections }, research);
    if (resume?.turn.question && resume.answer === undefined && asker === null)
      throw new AnswerRequiredError(
        sessionId as string,
        resume.turn.question.questionId,
        resume.turn.question.question,
      );
    prepared = { sessionId, research, runtime, asker, resume };
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  const interruption = interruptOnSignals(io);
  try {
    const onEvent = createProgressPrinter(io.stderr, { calls: isTerminal(io.stderr), stages: true });
    const { research, runtime, asker, resume } = prepared;
    const outcome = await runTurn<RunResearchResult>(
      {
        ...(prepared.sessionId !== undefined ? { sessionId: prepared.sessionId } : {}),
        idPrefix: "research",
        // As runResearch titles the sessions it creates: `sessions list` then shows the task.
        title: task.trim().slice(0, 80),
        program: resume?.recordedProgram ?? { ref: RESEARCH_PROGRAM_REF },
        runtime,
        asker,
        signal: interruption.signal,
        onEvent,
        ...budgets,
      },
      (session) =>
        resume
          ? continueRun(resume, session.created)
          : research.runResearch(task, {
              sessionId: session.sessionId,
              ...(workDir !== undefined ? { workDir } : {}),
              ...(flags.interactive ? { interactive: true } : {}),
              ...(sections ? { sections } : {}),
            }),
      io.stderr,
    );
    if (!outcome.ok) {
      return reportFailure(context, outcome.error, {
        json,
        during: outcome.handle === null ? "setup" : "run",
        handle: outcome.handle,
        interruptedExitCode: interruption.exitCode(),
      });
    }
    const { handle, value } = outcome;
    if (json) {
      const result: ResearchJsonResult = {
        ok: true,
        session_id: handle.sessionId,
        created: handle.created,
        turn_id: handle.turnId,
        status: value.status,
        work_dir: value.workDir,
        artifacts: value.artifacts,
        summary: value.summary,
      };
      writeJson(io.stdout, result);
    } else {
      for (const artifact of value.artifacts) writeLine(io.stdout, artifact);
      if (value.summary) writeLine(io.stderr, value.summary);
      writeLine(
        io.stderr,
        `status: ${value.status}${value.status === "stopped" && value.result.stoppedAt ? ` (at ${value.result.stoppedAt})` : ""}   work dir: ${value.workDir}`,
      );
    }
    writeLine(io.stderr, sessionLine(handle.sessionId));
    return EXIT_CODES.ok;
  } finally {
    interruption.dispose();
  }
}

/**
 * The research run of the same task (and work dir and sections, when given)
 * that this session's latest turn left failed, interrupted or waiting, ready
 * to resume; null when there is none, so the run starts anew.
 */
async function unfinishedRun(
  sessionId: string,
  task: string,
  requested: { workDir: string | undefined; sections: string[] | undefined },
  research: ResearchModule,
): Promise<PreparedResume | null> {
  if ((await openStore().getSession(sessionId)) === null) return null;
  let turn;
  try {
    turn = describeTurn({ sessionId });
  } catch (error) {
    if (hasErrorCode(error, "nothing_to_resume")) return null;
    throw error;
  }
  const input = (turn.input ?? {}) as { task?: unknown; workDir?: unknown; sections?: unknown };
  const same =
    turn.resumable &&
    turn.program === RESEARCH_PROGRAM_REF &&
    input.task === task &&
    (requested.workDir === undefined || input.workDir === requested.workDir) &&
    (requested.sections === undefined || JSON.stringify(input.sections) === JSON.stringify(requested.sections));
  if (!same) return null;
  return prepareResume({ sessionId, turnId: turn.turnId, program: research.researchAgent });
}

/** Resumes the run and reports it as runResearch would have. */
async function continueRun(resume: PreparedResume, created: boolean): Promise<RunResearchResult> {
  const result = await resumeTurn<ResearchResult>(resume);
  const workDir = (resume.turn.input as { workDir: string }).workDir;
  return {
    sessionId: resume.turn.sessionId,
    created,
    workDir,
    artifacts: result.artifacts.map((artifact) => join(workDir, ...artifact.split("/"))),
    summary: result.summary,
    status: result.status,
    result,
  };
}
