import { compactSession, type CompactionResult } from "@openprogram/session-context/compaction";
import { requireRuntime } from "@openprogram/session-context/runtime";
import type { CommandContext } from "../../command-context.js";
import { createCompactionLines } from "../../compaction-lines.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions compact`. */
export interface CompactFlags {
  /** Tokens of recent conversation to keep verbatim (default: the configuration's, else a quarter of the window). */
  keepRecentTokens?: number;
  json?: boolean;
}

/**
 * `openprogram sessions compact <id>`: the configured model summarises the
 * session's history except its most recent turns, and the summary stands in
 * for them from the next turn on (Python OpenProgram's compaction: one
 * summary node, `_last_summary_*` in meta.json). Progress goes to stderr;
 * --json prints the result.
 */
export async function compactCommand(sessionId: string, flags: CompactFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let result: CompactionResult;
  try {
    await requireExistingSession(sessionId);
    const runtime = requireRuntime("compaction asks the model for the summary");
    result = await compactSession(sessionId, {
      runtime,
      source: "cli",
      onEvent: createCompactionLines(io.stderr),
      ...(flags.keepRecentTokens !== undefined ? { keepRecentTokens: flags.keepRecentTokens } : {}),
    });
  } catch (error) {
    return reportFailure(context, error, { json, during: "run" });
  }
  if (json)
    writeJson(io.stdout, {
      ok: true,
      session_id: result.sessionId,
      summary_id: result.summaryId,
      covered: result.covered,
      kept: result.kept,
      tokens_before: result.tokensBefore,
      tokens_after: result.tokensAfter,
    });
  return EXIT_CODES.ok;
}
