import { InvalidInputError, SessionNotFoundError } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import { assertValidSessionId, openStore } from "@openprogram/session-context/store";
import { formatTimestamp } from "./output.js";

/** `--session ID` (continue or create) and `--resume ID` (continue an existing one). */
export interface SessionFlags {
  session?: string;
  resume?: string;
}

/**
 * The session id to enter, or undefined for a new session. Invalid ids throw
 * InvalidSessionIdError; `--resume` of a session that does not exist throws
 * SessionNotFoundError listing the most recent sessions.
 */
export async function selectSession(flags: SessionFlags): Promise<string | undefined> {
  if (flags.session !== undefined && flags.resume !== undefined) {
    throw new InvalidInputError(
      "Pass either --session (continue or create) or --resume (continue an existing session), not both.",
    );
  }
  if (flags.session !== undefined) {
    assertValidSessionId(flags.session);
    return flags.session;
  }
  if (flags.resume === undefined) return undefined;
  assertValidSessionId(flags.resume);
  if ((await openStore().getSession(flags.resume)) === null)
    throw new SessionNotFoundError(flags.resume, await recentSessionsHint());
  return flags.resume;
}

/** Names a session that must exist for a `sessions` command; throws SessionNotFoundError with the recent ones listed. */
export async function requireExistingSession(sessionId: string): Promise<string> {
  assertValidSessionId(sessionId);
  if ((await openStore().getSession(sessionId)) === null)
    throw new SessionNotFoundError(sessionId, await recentSessionsHint());
  return sessionId;
}

async function recentSessionsHint(): Promise<string> {
  const recent = await openStore().listSessions({ limit: 5 });
  if (recent.length === 0) return "There are no sessions yet; use --session <id> to create one under that id.";
  const lines = recent.map((record) => {
    const label = record.title || (typeof record.preview === "string" ? record.preview : "");
    return `  ${record.id}  ${formatTimestamp(record.updated_at)}${label ? `  ${clipLine(label, 50)}` : ""}`;
  });
  return `Most recent sessions:\n${lines.join("\n")}\nRun \`openprogram sessions list\` for all of them.`;
}
