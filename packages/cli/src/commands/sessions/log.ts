import { openStore, type GitLogEntry } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine, writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";
import { formatTable } from "../../table.js";

/** Flags of `openprogram sessions log`. */
export interface LogFlags {
  json?: boolean;
  /** At most this many commits (default 100). */
  limit?: number;
}

/** `openprogram sessions log <id>`: the session repository's commits, newest first (one per turn). */
export async function logCommand(sessionId: string, flags: LogFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let entries: GitLogEntry[];
  try {
    entries = await openStore().gitLog(
      await requireExistingSession(sessionId),
      flags.limit !== undefined ? { maxCount: flags.limit } : {},
    );
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, entries);
    return EXIT_CODES.ok;
  }
  if (entries.length === 0) {
    writeLine(io.stderr, `Session ${sessionId} has no commits.`);
    return EXIT_CODES.ok;
  }
  writeText(
    io.stdout,
    formatTable(
      ["COMMIT", "DATE", "MESSAGE"],
      entries.map((entry) => [entry.hash.slice(0, 10), entry.date, entry.message.split("\n")[0] ?? ""]),
    ),
  );
  return EXIT_CODES.ok;
}
