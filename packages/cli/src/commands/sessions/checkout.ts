import { checkoutHead } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions checkout`. */
export interface CheckoutFlags {
  json?: boolean;
}

/**
 * `openprogram sessions checkout <id> <node_id>`: moves the session's head to
 * a node on one of its branches, so the next turn continues from there.
 * Refused (exit 2) for a node on no branch or a compaction summary, and
 * (exit 75) while a turn runs in the session.
 */
export async function checkoutCommand(
  sessionId: string,
  nodeId: string,
  flags: CheckoutFlags,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let moved: { headId: string; previousHeadId: string | null };
  try {
    await requireExistingSession(sessionId);
    moved = await checkoutHead(sessionId, nodeId);
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  if (json)
    writeJson(io.stdout, {
      ok: true,
      session_id: sessionId,
      head_id: moved.headId,
      previous_head_id: moved.previousHeadId,
    });
  else
    writeLine(
      io.stderr,
      `Session ${sessionId}: head moved from ${moved.previousHeadId ?? "(none)"} to ${moved.headId}.`,
    );
  return EXIT_CODES.ok;
}
