import { dumpsPython } from "../../json/python-json.js";
import { writeFileAtomic } from "../atomic-file.js";
import { readMetaFile } from "../meta-file.js";
import type { SessionNode } from "../types.js";
import type { DoctorFinding, SessionScan } from "./types.js";
import { storeInternals } from "../internal.js";

/**
 * `dangling_head` (head_id names no node) and `missing_head` (conversation
 * nodes but no head_id); --fix points head_id at the conversation's last node.
 */
export async function checkHead(scan: SessionScan): Promise<void> {
  if (!scan.meta) return;
  const nodes = scan.nodes.map((entry) => entry.node);
  const byId = new Set(nodes.map((node) => node.id));
  const head = scan.meta.head_id ?? null;
  const expected = computeHead(nodes);
  if (head !== null && !byId.has(head)) {
    const finding = scan.add({
      kind: "dangling_head",
      severity: "error",
      message: `head_id '${head}' names no node of the session.`,
      path: scan.paths.meta,
      remedy: "Point it at the last node of the conversation branch (run with --fix).",
    });
    if (scan.canFix) await repairHead(scan, expected, finding);
  } else if (head === null && expected !== null) {
    const finding = scan.add({
      kind: "missing_head",
      severity: "warning",
      message: "The session has conversation nodes but no head_id.",
      path: scan.paths.meta,
      remedy: "Point it at the last node of the conversation branch (run with --fix).",
    });
    if (scan.canFix) await repairHead(scan, expected, finding);
  }
}

async function repairHead(scan: SessionScan, head: string | null, finding: DoctorFinding): Promise<void> {
  await storeInternals(scan.db).withSessionLock(scan.sessionId, async () => {
    const reading = readMetaFile(scan.paths.meta);
    if (reading.state === "ok") await writeFileAtomic(scan.paths.meta, dumpsPython({ ...reading.meta, head_id: head }));
  });
  finding.fixed = true;
  finding.remedy = `Set head_id to ${head ?? "null"}.`;
}

/**
 * The last top-level conversation node, following predecessor links from the
 * newest. Failed work is never the head, nor a reply that did not complete
 * (one still streaming, cancelled or interrupted hangs on the head without
 * becoming it).
 */
export function computeHead(nodes: SessionNode[]): string | null {
  const conversation = nodes.filter(
    (node) =>
      node.caller === "" &&
      !(node.role === "user" && node.name === "ask_user") &&
      node.metadata.status !== "failed" &&
      !(node.role === "llm" && node.metadata.status !== undefined && node.metadata.status !== "completed"),
  );
  if (conversation.length === 0) return null;
  const referenced = new Set(conversation.map((node) => node.predecessor));
  // Ties (possible after duplicate seqs) go to the newest node, then the id, so the answer never depends on readdir order.
  const tips = conversation
    .filter((node) => !referenced.has(node.id))
    .sort((a, b) => b.seq - a.seq || b.created_at - a.created_at || a.id.localeCompare(b.id));
  return (tips[0] ?? conversation[conversation.length - 1])?.id ?? null;
}
