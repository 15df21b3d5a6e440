import type { CompactionEvent } from "../context/events.js";
import { describeCompaction } from "./compaction-wording.js";

/** A compaction event in the snake_case wire form every entry shows it in (a web frame, a `--events` line). */
// A type, not an interface: it is a plain JSON record (assignable to Record<string, unknown>).
export type CompactionRecord = {
  type: "compaction";
  session_id: string;
  phase: CompactionEvent["phase"];
  reason: CompactionEvent["reason"];
  summary_id?: string | null;
  covered?: number;
  kept?: number;
  tokens_before?: number;
  tokens_after?: number;
  error?: string;
  /** The event in a sentence, as every entry words it (`describeCompaction`). */
  text: string;
};

/** The event's wire form: the fields it has, none it lacks. */
export function compactionRecord(event: CompactionEvent): CompactionRecord {
  return {
    type: "compaction",
    session_id: event.sessionId,
    phase: event.phase,
    reason: event.reason,
    ...(event.summaryId !== undefined ? { summary_id: event.summaryId } : {}),
    ...(event.covered !== undefined ? { covered: event.covered } : {}),
    ...(event.kept !== undefined ? { kept: event.kept } : {}),
    ...(event.tokensBefore !== undefined ? { tokens_before: event.tokensBefore } : {}),
    ...(event.tokensAfter !== undefined ? { tokens_after: event.tokensAfter } : {}),
    ...(event.error !== undefined ? { error: event.error } : {}),
    text: describeCompaction(event),
  };
}
