import { gcSessions, type GcReport } from "@openprogram/session-context";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions gc`. */
export interface GcFlags {
  json?: boolean;
}

/** `openprogram sessions gc [<id>]`: `git gc` in each session repository (or one), and the space it saved. */
export async function gcCommand(
  sessionId: string | undefined,
  flags: GcFlags,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let report: GcReport;
  try {
    if (sessionId !== undefined) await requireExistingSession(sessionId);
    report = await gcSessions(sessionId !== undefined ? { sessionId } : {});
  } catch (error) {
    return reportFailure(context, error, { json, during: sessionId === undefined ? "run" : "setup" });
  }
  if (json) {
    writeJson(io.stdout, report);
    return EXIT_CODES.ok;
  }
  for (const entry of report.sessions) {
    if (entry.skipped === "running") writeLine(io.stderr, `Skipped ${entry.sessionId}: a turn is running in it.`);
  }
  const collected = report.sessions.filter((entry) => entry.skipped === undefined);
  writeLine(
    io.stdout,
    `Collected ${collected.length} repositor${collected.length === 1 ? "y" : "ies"}: ${formatBytes(
      collected.reduce((sum, entry) => sum + entry.bytesBefore, 0),
    )} before, ${formatBytes(collected.reduce((sum, entry) => sum + entry.bytesAfter, 0))} after, ${formatBytes(report.bytesSaved)} saved.`,
  );
  return EXIT_CODES.ok;
}

function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? "-" : "";
  const value = Math.abs(bytes);
  if (value < 1024) return `${sign}${value} B`;
  if (value < 1024 * 1024) return `${sign}${(value / 1024).toFixed(1)} KiB`;
  return `${sign}${(value / 1024 / 1024).toFixed(1)} MiB`;
}
