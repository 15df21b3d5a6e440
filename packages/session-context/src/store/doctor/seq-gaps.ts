import type { SessionScan } from "./types.js";

/** `seq_gap`: seqs no file has (a write that never completed). Harmless, reported only: seqs are never reused. */
export async function checkSeqGaps(scan: SessionScan): Promise<void> {
  const seqs = [...new Set(scan.takenSeqs)].sort((a, b) => a - b);
  const gaps: number[] = [];
  for (let index = 1; index < seqs.length; index++) {
    for (let missing = (seqs[index - 1] as number) + 1; missing < (seqs[index] as number); missing++)
      gaps.push(missing);
  }
  if (seqs.length > 0 && (seqs[0] as number) > 0)
    for (let missing = 0; missing < (seqs[0] as number); missing++) gaps.unshift(missing);
  if (gaps.length === 0) return;
  scan.add({
    kind: "seq_gap",
    severity: "warning",
    message: `No node has seq ${gaps.slice(0, 10).join(", ")}${gaps.length > 10 ? ", ..." : ""} (left by a write that never completed).`,
    remedy: "Nothing to do: gaps are harmless and seqs are never reused.",
  });
}
