import { join } from "node:path";
import { writeFileAtomic } from "../atomic-file.js";
import { findCommittedVersion } from "../git-repo.js";
import { parseNodeText } from "../history.js";
import { parseNodeFileName } from "../layout.js";
import type { SessionScan } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * `corrupt_node`: a node file that does not parse. --fix restores the newest
 * committed version that parses, looking back through the file's history
 * (a commit may have recorded it corrupt already); without one it says how to
 * repair it by hand.
 */
export async function checkCorruptNodes(scan: SessionScan): Promise<void> {
  const { paths } = scan;
  for (const { file } of scan.corrupt) {
    const path = join(paths.history, file);
    const finding = scan.add({
      kind: "corrupt_node",
      severity: "error",
      message: "A node file is not valid node JSON.",
      path,
      remedy: `Restore it by hand (e.g. git -C ${paths.dir} show HEAD:history/${file}) or move it out of history/.`,
    });
    if (!scan.canFix) continue;
    if (scan.gitRefused) {
      finding.remedy = `Its history is not read (see unsafe_git_config); ${finding.remedy}`;
      continue;
    }
    const seq = parseNodeFileName(file)?.seq ?? 0;
    let found: { text: string; commit: string } | null;
    try {
      found = await findCommittedVersion(
        paths,
        `history/${file}`,
        (text) => typeof parseNodeText(text, seq) !== "string",
      );
    } catch (error) {
      finding.remedy = `Its history cannot be read from git (${(error as Error).message}); ${finding.remedy}`;
      continue;
    }
    const restored = found === null ? null : parseNodeText(found.text, seq);
    if (found === null || restored === null || typeof restored === "string") {
      finding.remedy = `No committed version that parses; ${finding.remedy}`;
      continue;
    }
    await storeInternals(scan.db).withSessionLock(scan.sessionId, () => writeFileAtomic(path, found.text));
    scan.nodes.push({ file, node: restored });
    finding.fixed = true;
    finding.remedy = `Restored the last committed version that parses (commit ${found.commit.slice(0, 12)}).`;
  }
}
