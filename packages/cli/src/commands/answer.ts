import { NoPendingQuestionError } from "@openprogram/session-context";
import { answerQuestion, describeTurn, type ResumableTurn } from "@openprogram/session-context/turns";
import type { CommandContext } from "../command-context.js";
import { EXIT_CODES } from "../exit-codes.js";
import { sessionLine, writeJson, writeLine } from "../output.js";
import { reportFailure } from "../report.js";
import { runResume } from "../run-resume.js";
import { requireExistingSession } from "../session-selection.js";

/** Flags of `openprogram answer`. */
export interface AnswerFlags {
  question?: string;
  answers?: string;
  /** The module the turn recorded, when it is outside the working directory (you trust it to be imported). */
  program?: string;
  json?: boolean;
  /** MCP servers whose tools the resumed turn offers (give the ones it ran with). */
  mcp?: string[];
}

/** The --json output when the answer went to a live process. */
export interface AnswerJsonResult {
  ok: true;
  session_id: string;
  question_id: string;
  answer: string;
  /** The turn waiting for it, which its own process now continues. */
  turn_id: string;
  delivered_to: "live_process";
}

/**
 * `openprogram answer <session_id> <value>`: answers the question a turn
 * waits for. When the process that asked still waits, the answer goes to it
 * (recorded on the question's node, which that process watches) and this
 * command ends; otherwise this process resumes the turn with the answer and
 * runs it to completion, printing like `run`.
 */
export async function answerCommand(
  sessionId: string,
  value: string,
  flags: AnswerFlags,
  context: CommandContext,
): Promise<number> {
  const json = flags.json === true;
  let turn: ResumableTurn;
  try {
    await requireExistingSession(sessionId);
    turn = describeTurn({ sessionId });
    if (!turn.question) {
      throw new NoPendingQuestionError(
        `Session '${sessionId}' has no question waiting for an answer (its latest turn ${turn.turnId} is ${turn.status}).`,
      );
    }
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  if (!turn.live) {
    return runResume(
      {
        sessionId,
        answer: value,
        questionId: flags.question,
        answersFile: flags.answers,
        program: flags.program,
        mcp: flags.mcp,
        json,
      },
      context,
    );
  }
  try {
    const answered = await answerQuestion({
      sessionId,
      value,
      ...(flags.question !== undefined ? { questionId: flags.question } : {}),
    });
    // The asking process went away meanwhile: the answer is recorded, and this process continues the turn.
    if (!answered.live)
      return runResume(
        { sessionId, answersFile: flags.answers, program: flags.program, mcp: flags.mcp, json },
        context,
      );
    const { io } = context;
    if (json) {
      const result: AnswerJsonResult = {
        ok: true,
        session_id: sessionId,
        question_id: answered.questionId,
        answer: answered.answer,
        turn_id: answered.turnId,
        delivered_to: "live_process",
      };
      writeJson(io.stdout, result);
    } else {
      writeLine(
        io.stderr,
        `answered ${answered.questionId} with ${JSON.stringify(answered.answer)}; the process running turn ${answered.turnId} continues it`,
      );
    }
    writeLine(io.stderr, sessionLine(sessionId));
    return EXIT_CODES.ok;
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
}
