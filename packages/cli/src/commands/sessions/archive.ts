import { archiveSession } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions archive` and `unarchive`. */
export interface ArchiveFlags {
  json?: boolean;
}

/** `openprogram sessions archive <id>`: hides the session from `sessions list` (Python's `archived` flag). */
export function archiveCommand(sessionId: string, flags: ArchiveFlags, context: CommandContext): Promise<number> {
  return setArchived(sessionId, true, flags, context);
}

/** `openprogram sessions unarchive <id>`: lists the session again. */
export function unarchiveCommand(sessionId: string, flags: ArchiveFlags, context: CommandContext): Promise<number> {
  return setArchived(sessionId, false, flags, context);
}

async function setArchived(
  sessionId: string,
  archived: boolean,
  flags: ArchiveFlags,
  context: CommandContext,
): Promise<number> {
  const json = flags.json === true;
  try {
    await requireExistingSession(sessionId);
    await archiveSession(sessionId, { archived });
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  if (json) writeJson(context.io.stdout, { ok: true, session_id: sessionId, archived });
  else
    writeLine(
      context.io.stderr,
      archived
        ? `Archived session ${sessionId} (hidden from \`sessions list\`; \`sessions prune\` removes it after 90 days without activity).`
        : `Unarchived session ${sessionId}.`,
    );
  return EXIT_CODES.ok;
}
