import { InvalidInputError } from "@openprogram/session-context";
import { clipLine } from "@openprogram/session-context/messages";
import {
  branchTipRecord,
  listBranches,
  nameBranch,
  openStore,
  type BranchTip,
} from "@openprogram/session-context/store";
import type { CommandContext } from "../../command-context.js";
import { EXIT_CODES } from "../../exit-codes.js";
import { formatTimestamp, writeJson, writeLine, writeText } from "../../output.js";
import { reportFailure } from "../../report.js";
import { requireExistingSession } from "../../session-selection.js";
import { formatTable } from "../../table.js";

/** Flags of `openprogram sessions branches`. */
export interface BranchesFlags {
  /** `--name <tip> <name>`: the tip to name (the name is the second argument). */
  name?: string;
  json?: boolean;
}

/**
 * `openprogram sessions branches <id>`: the session's branch tips, newest
 * first, the head's marked `*` (as Python OpenProgram lists them);
 * `--name <tip> <name>` names a tip in meta.json `branches` first. `--json`
 * prints `[{head_id, name, created_at, updated_at, archived, active, trunk}]`.
 */
export async function branchesCommand(
  sessionId: string,
  newName: string | undefined,
  flags: BranchesFlags,
  context: CommandContext,
): Promise<number> {
  const { io } = context;
  const json = flags.json === true;
  let tips: BranchTip[];
  let preview: Map<string, string>;
  try {
    await requireExistingSession(sessionId);
    if (flags.name !== undefined) {
      if (newName === undefined)
        throw new InvalidInputError("Pass the name after the session id: sessions branches <id> --name <tip> <name>.");
      const tip = await nameBranch(sessionId, flags.name, newName);
      if (!json) writeLine(io.stderr, `Named branch ${tip.headId} "${tip.name ?? ""}".`);
    } else if (newName !== undefined) {
      throw new InvalidInputError(`Unexpected argument "${newName}"; to name a branch pass --name <tip> <name>.`);
    }
    tips = await listBranches(sessionId);
    preview = new Map(
      (await openStore().loadNodes(sessionId)).map((node) => [
        node.id,
        typeof node.output === "string" ? node.output : "",
      ]),
    );
  } catch (error) {
    return reportFailure(context, error, { json, during: "setup" });
  }
  if (json) {
    writeJson(io.stdout, tips.map(branchTipRecord));
    return EXIT_CODES.ok;
  }
  if (tips.length === 0) {
    writeLine(io.stderr, `Session ${sessionId} has no branches yet.`);
    return EXIT_CODES.ok;
  }
  const rows = tips.map((tip) => [
    tip.active ? "*" : " ",
    tip.headId,
    tip.name ?? "-",
    formatTimestamp(tip.updatedAt),
    clipLine(preview.get(tip.headId) ?? "", 50),
  ]);
  writeText(io.stdout, formatTable(["", "TIP", "NAME", "UPDATED (UTC)", "LAST TURN"], rows));
  return EXIT_CODES.ok;
}
