import { clipLine } from "@openprogram/session-context/messages";
import { pruneSessions, type PruneEntry, type PruneReport } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatTimestamp, writeJson, writeLine, writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { formatTable } from "../../table.js";

/** Flags of `openprogram sessions prune`. */
export interface PruneFlags {
  /** List what would go; delete nothing. */
  dryRun?: boolean;
  json?: boolean;
}

const REASONS: Record<PruneEntry["reason"], string> = {
  empty: "empty, over an hour old",
  archive_expired: "archived, 90 days without activity",
  over_capacity: "archived, beyond 1,000 sessions",
};

/**
 * `openprogram sessions prune`: Python OpenProgram's startup cleanup, on
 * demand (see the core's pruneSessions): what it removed (or, with
 * --dry-run, would remove), and what it kept because a turn runs in it or a
 * question waits. `--json` prints the report.
 */
export async function pruneCommand(flags: PruneFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let report: PruneReport;
  try {
    report = await pruneSessions({ dryRun: flags.dryRun === true });
  } catch (error) {
    return reportFailure(context, error, { json, during: "run" });
  }
  if (json) {
    writeJson(io.stdout, report);
    return EXIT_CODES.ok;
  }
  const verb = report.dryRun ? "Would remove" : "Removed";
  if (report.removed.length > 0) {
    writeText(
      io.stdout,
      formatTable(
        ["ID", "WHY", "UPDATED (UTC)", "TITLE"],
        report.removed.map((entry) => [
          entry.sessionId,
          REASONS[entry.reason],
          formatTimestamp(entry.updatedAt),
          clipLine(entry.title, 40),
        ]),
      ),
    );
  }
  for (const entry of report.kept)
    writeLine(
      io.stderr,
      `Kept ${entry.sessionId} (${REASONS[entry.reason]}): ${entry.keptBecause === "running" ? "a turn is running in it" : "a question in it waits for an answer"}.`,
    );
  writeLine(io.stderr, `${verb} ${report.removed.length} of ${report.checked} sessions in ${report.root}.`);
  return EXIT_CODES.ok;
}
