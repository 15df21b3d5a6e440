import { describe, expect, it } from "vitest";
import { compactionRecord } from "../src/compaction/compaction-record.js";
import { describeCompaction } from "../src/compaction/compaction-wording.js";
import type { CompactionEvent } from "../src/context/events.js";

const event = (fields: Partial<CompactionEvent>): CompactionEvent => ({
  type: "compaction",
  sessionId: "thesis",
  phase: "finished",
  reason: "manual",
  ...fields,
});

describe("the one wording of a compaction (CLI line, web note, --events text)", () => {
  it("says what happened, why, and what the summary stands for", () => {
    expect(describeCompaction(event({ phase: "started", reason: "auto" }))).toBe(
      "compacting session thesis (the conversation neared the model's window)…",
    );
    expect(
      describeCompaction(
        event({
          reason: "overflow",
          summaryId: "summary_0a1b2c3d4e",
          covered: 38,
          kept: 6,
          tokensBefore: 9,
          tokensAfter: 3,
        }),
      ),
    ).toBe(
      "compacted session thesis (the model refused the request as too long): summary summary_0a1b2c3d4e stands for 38 earlier nodes, 6 kept verbatim (9 -> 3 tokens)",
    );
    expect(describeCompaction(event({ summaryId: null }))).toBe(
      "nothing to compact in session thesis: its history is already the most recent turns",
    );
    expect(describeCompaction(event({ phase: "failed", error: "the model is down" }))).toBe(
      "compaction of session thesis failed: the model is down",
    );
  });

  it("travels in the wire form as its text", () => {
    const started = event({ phase: "started" });
    expect(compactionRecord(started)).toEqual({
      type: "compaction",
      session_id: "thesis",
      phase: "started",
      reason: "manual",
      text: "compacting session thesis…",
    });
  });
});
