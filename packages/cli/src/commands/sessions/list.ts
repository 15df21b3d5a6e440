import { clipLine } from "@openprogram/session-context/messages";
import { defaultSessionsRoot, openStore, withLiveStatus, type SessionRecord } from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatTimestamp, writeJson, writeLine, writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { formatTable } from "../../table.js";

/** Flags of `openprogram sessions list`. */
export interface ListFlags {
  /** Include archived sessions. */
  all?: boolean;
  /** Only archived sessions (Python's `archived=` filter). */
  archived?: boolean;
  json?: boolean;
  /** At most this many (most recent first). */
  limit?: number;
}

/**
 * `openprogram sessions list`: the sessions of $OPENPROGRAM_HOME/sessions, most
 * recently updated first, as a table (or the registry entries with --json).
 * Archived sessions are hidden, as Python lists them: `--all` includes them,
 * `--archived` lists only them.
 */
export async function listCommand(flags: ListFlags, context: CommandContext): Promise<number> {
  const { io } = context;
  let records: SessionRecord[];
  try {
    records = await openStore().listSessions({
      includeArchived: flags.all === true || flags.archived === true,
      ...(flags.archived === true ? {} : flags.limit !== undefined ? { limit: flags.limit } : {}),
    });
    if (flags.archived === true) {
      records = records.filter((record) => record.archived);
      if (flags.limit !== undefined) records = records.slice(0, flags.limit);
    }
    // A `running` session whose process died (no live lease) is shown as it is: interrupted, and resumable.
    records = await withLiveStatus(records);
  } catch (error) {
    return reportFailure(context, error, { json: flags.json === true, during: "setup" });
  }
  if (flags.json) {
    writeJson(io.stdout, records);
    return EXIT_CODES.ok;
  }
  if (records.length === 0) {
    writeLine(io.stderr, `No sessions in ${defaultSessionsRoot(io.env)}.`);
    return EXIT_CODES.ok;
  }
  const rows = records.map((record) => [
    record.id,
    String(record.status ?? ""),
    record.source || "-",
    formatTimestamp(record.updated_at),
    clipLine(record.title || (typeof record.preview === "string" ? record.preview : ""), 60) +
      (record.archived ? " (archived)" : ""),
  ]);
  writeText(io.stdout, formatTable(["ID", "STATUS", "SOURCE", "UPDATED (UTC)", "TITLE / PREVIEW"], rows));
  return EXIT_CODES.ok;
}
