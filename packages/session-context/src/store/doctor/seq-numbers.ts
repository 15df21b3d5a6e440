import { rmSync } from "node:fs";
import { join } from "node:path";
import { dumpsPython } from "../../json/python-json.js";
import { writeFileAtomic } from "../atomic-file.js";
import { nodeFileName, parseNodeFileName } from "../layout.js";
import type { SessionNode } from "../types.js";
import type { NodeFileEntry, SessionScan } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * `seq_mismatch` (a node's seq differs from its file name's; --fix rewrites
 * the node) and `duplicate_seq` (two files with one seq; --fix moves the later
 * ones to fresh seqs at the end, keeping their ids and so every reference).
 */
export async function checkSeqNumbers(scan: SessionScan): Promise<void> {
  const { paths } = scan;
  const bySeq = new Map<number, NodeFileEntry[]>();
  for (const entry of scan.nodes) {
    const fileSeq = parseNodeFileName(entry.file)?.seq as number;
    if (entry.node.seq !== fileSeq) {
      const finding = scan.add({
        kind: "seq_mismatch",
        severity: "warning",
        message: `Node ${entry.node.id} says seq ${entry.node.seq} but its file name says ${fileSeq}.`,
        path: join(paths.history, entry.file),
        remedy: "Make the node's seq match its file name (run with --fix).",
      });
      if (scan.canFix) {
        entry.node = { ...entry.node, seq: fileSeq };
        const text = dumpsPython(entry.node);
        await storeInternals(scan.db).withSessionLock(scan.sessionId, () =>
          writeFileAtomic(join(paths.history, entry.file), text),
        );
        finding.fixed = true;
        finding.remedy = "Rewrote the node with its file name's seq.";
      }
    }
    const list = bySeq.get(fileSeq) ?? [];
    list.push(entry);
    bySeq.set(fileSeq, list);
  }
  let next = Math.max(-1, ...scan.takenSeqs) + 1;
  for (const [seq, entries] of [...bySeq].sort((a, b) => a[0] - b[0])) {
    if (entries.length < 2) continue;
    // The earliest written keeps the seq; the others move to fresh seqs at the end.
    const [, ...later] = [...entries].sort((a, b) => a.node.created_at - b.node.created_at);
    for (const entry of later) {
      const finding = scan.add({
        kind: "duplicate_seq",
        severity: "error",
        message: `seq ${seq} is used by more than one node (${entries.map((candidate) => candidate.node.id).join(", ")}).`,
        path: join(paths.history, entry.file),
        remedy: "Move the later node to a fresh seq at the end (run with --fix).",
      });
      if (!scan.canFix) continue;
      const moved: SessionNode = { ...entry.node, seq: next };
      const role = parseNodeFileName(entry.file)?.role ?? moved.role;
      const target = nodeFileName(next, role, moved.id);
      const from = entry.file;
      await storeInternals(scan.db).withSessionLock(scan.sessionId, async () => {
        await writeFileAtomic(join(paths.history, target), dumpsPython(moved));
        rmSync(join(paths.history, from));
      });
      entry.node = moved;
      entry.file = target;
      finding.fixed = true;
      finding.remedy = `Moved node ${moved.id} to seq ${next} (${target}).`;
      next++;
    }
  }
}
