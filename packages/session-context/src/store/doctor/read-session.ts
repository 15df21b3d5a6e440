import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isTempFileName } from "../atomic-file.js";
import { parseNodeText, readNodeFile, unreadableReason } from "../history.js";
import { parseNodeFileName, type SessionPaths } from "../layout.js";
import type { SessionScan } from "./types.js";

/** history/ as the checks need it: parsed nodes by file, the files that do not parse, temp files, every taken seq. */
export function readHistoryFolder(paths: SessionPaths): Pick<SessionScan, "nodes" | "corrupt" | "temps" | "takenSeqs"> {
  const scan: Pick<SessionScan, "nodes" | "corrupt" | "temps" | "takenSeqs"> = {
    nodes: [],
    corrupt: [],
    temps: [],
    takenSeqs: [],
  };
  const files = existsSync(paths.history) ? readdirSync(paths.history).sort() : [];
  for (const file of files) {
    if (isTempFileName(file)) {
      scan.temps.push(file);
      continue;
    }
    const parsedName = parseNodeFileName(file);
    if (!parsedName) continue;
    scan.takenSeqs.push(parsedName.seq);
    let text: string;
    try {
      text = readNodeFile(join(paths.history, file));
    } catch (error) {
      scan.corrupt.push({ file, reason: unreadableReason(error) });
      continue;
    }
    const node = parseNodeText(text, parsedName.seq);
    if (typeof node === "string") scan.corrupt.push({ file, reason: node });
    else scan.nodes.push({ file, node });
  }
  return scan;
}
