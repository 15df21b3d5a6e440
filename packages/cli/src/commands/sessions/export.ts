import { exportSession, type ExportFormat } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions export`. */
export interface ExportFlags {
  format?: ExportFormat;
}

/** `openprogram sessions export <id> [--format json|md]`: the whole session on stdout. */
export async function exportCommand(sessionId: string, flags: ExportFlags, context: CommandContext): Promise<number> {
  let text: string;
  try {
    text = await exportSession(await requireExistingSession(sessionId), { format: flags.format ?? "json" });
  } catch (error) {
    return reportFailure(context, error, { json: false, during: "setup" });
  }
  // JSON stays JSON; the Markdown transcript is text for a human (the core escapes it too).
  if (flags.format === "md") writeText(context.io.stdout, text);
  else context.io.stdout.write(text);
  return EXIT_CODES.ok;
}
