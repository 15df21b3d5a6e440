import { createInterface } from "node:readline";
import { InvalidInputError } from "@openprogram/session-context";
import { describeSession, openStore } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { isTerminal, type CliIo } from "../../io.js";
import { writeJson, writeLine } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";

/** Flags of `openprogram sessions rm`. */
export interface RmFlags {
  /** Delete without asking. */
  yes?: boolean;
  json?: boolean;
}

/**
 * `openprogram sessions rm <id>`: deletes the session (its directory and git
 * history, and its registry entry). Without --yes it asks on a terminal and
 * refuses (exit 2) when there is no terminal to ask on.
 */
export async function rmCommand(sessionId: string, flags: RmFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let description: string;
  try {
    await requireExistingSession(sessionId);
    const detail = await describeSession(sessionId);
    description = `${sessionId}${detail.record.title ? ` ("${detail.record.title}")` : ""}, ${detail.nodes.length} nodes`;
    if (!flags.yes && !(isTerminal(io.stdin) && isTerminal(io.stderr))) {
      throw new InvalidInputError(
        `Refusing to delete session ${sessionId} without confirmation: there is no terminal to ask on. Pass --yes to delete it.`,
      );
    }
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  if (!flags.yes && !(await confirm(io, `Delete session ${description}? This cannot be undone. [y/N] `))) {
    writeLine(io.stderr, `Kept session ${sessionId}.`);
    if (json) writeJson(io.stdout, { ok: false, session_id: sessionId, deleted: false });
    return EXIT_CODES.failed;
  }
  try {
    await openStore().deleteSession(sessionId);
  } catch (error) {
    return reportFailure(context, error, { json, during: "run" });
  }
  writeLine(io.stderr, `Deleted session ${description}.`);
  if (json) writeJson(io.stdout, { ok: true, session_id: sessionId, deleted: true });
  return EXIT_CODES.ok;
}

function confirm(io: CliIo, question: string): Promise<boolean> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
    let answered = false;
    rl.on("close", () => {
      if (!answered) resolve(false);
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(/^(y|yes)$/i.test(answer.trim()));
    });
  });
}
