import type { CompactionEvent } from "../context/events.js";

/**
 * The one sentence every entry shows for a compaction event: the CLI's stderr
 * line, the web page's note (it reads the `text` of the `compaction` frame,
 * `compactionRecord`), a `--events` line's `text`. Worded once, here, so the
 * user reads the same thing wherever they look.
 */
export function describeCompaction(event: CompactionEvent): string {
  const why =
    event.reason === "auto"
      ? " (the conversation neared the model's window)"
      : event.reason === "overflow"
        ? " (the model refused the request as too long)"
        : "";
  switch (event.phase) {
    case "started":
      return `compacting session ${event.sessionId}${why}…`;
    case "finished":
      return event.summaryId
        ? `compacted session ${event.sessionId}${why}: summary ${event.summaryId} stands for ${event.covered ?? 0} earlier nodes, ${event.kept ?? 0} kept verbatim (${event.tokensBefore ?? 0} -> ${event.tokensAfter ?? 0} tokens)`
        : `nothing to compact in session ${event.sessionId}: its history is already the most recent turns`;
    case "failed":
      return `compaction of session ${event.sessionId} failed: ${event.error ?? "unknown error"}`;
  }
}
