import type { CommandContext } from "../command-context.js";
import { budgetsOption, type BudgetFlags } from "../budget-flags.js";
import { runResume } from "../run-resume.js";

/** Flags of `openprogram resume`. */
export interface ResumeFlags extends BudgetFlags {
  turn?: string;
  answers?: string;
  /** The module the turn recorded, when it is outside the working directory (you trust it to be imported). */
  program?: string;
  json?: boolean;
  /** MCP servers whose tools the resumed turn offers (give the ones it ran with). */
  mcp?: string[];
}

/**
 * `openprogram resume <session_id>`: continues the session's latest
 * interrupted, failed or waiting turn (or `--turn <id>`) by replay, in this
 * process; recorded calls are not run again.
 */
export function resumeCommand(sessionId: string, flags: ResumeFlags, context: CommandContext): Promise<number> {
  return runResume(
    {
      sessionId,
      turnId: flags.turn,
      answersFile: flags.answers,
      program: flags.program,
      mcp: flags.mcp,
      json: flags.json === true,
      budgets: () => budgetsOption(flags, context.io),
    },
    context,
  );
}
