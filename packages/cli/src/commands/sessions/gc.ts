import { gcSessions, type GcReport } from "@openprogram/session-context/store";
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
    if (entry.skipped === "unsafe_path")
      writeLine(
        io.stderr,
        `Skipped ${entry.sessionId}: its .git holds a link or a special file (see \`openprogram sessions doctor\`).`,
      );
    if (entry.skipped === "unsafe_git_config")
      writeLine(
        io.stderr,
        `Skipped ${entry.sessionId}: its .git/config is unsafe (see \`openprogram sessions doctor\`).`,
      );
  }
  const collected = report.sessions.filter((entry) => entry.skipped === undefined);
  const packed = report.sessions.filter((entry) => entry.skipped === "already_packed").length;
  const before = collected.reduce((sum, entry) => sum + entry.bytesBefore, 0);
  const after = collected.reduce((sum, entry) => sum + entry.bytesAfter, 0);
  // Said as it is: a repository gc made bigger is "grew", never a negative saving.
  const change = after > before ? `grew by ${formatBytes(after - before)}` : `${formatBytes(before - after)} saved`;
  const lines = [
    collected.length === 0
      ? "Nothing to collect."
      : `Collected ${plural(collected.length)}: ${formatBytes(before)} before, ${formatBytes(after)} after, ${change}.`,
  ];
  if (packed > 0) lines.push(`${plural(packed)} already packed: left as ${packed === 1 ? "it is" : "they are"}.`);
  writeLine(io.stdout, lines.join("\n"));
  return EXIT_CODES.ok;
}

function plural(count: number): string {
  return `${count} repositor${count === 1 ? "y" : "ies"}`;
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
