import type { CompactionEvent, SessionEvent } from "@openprogram/session-context";

/** One line for a compaction event, for stderr: the user sees why the next reply reads a summary. */
export function compactionLine(event: CompactionEvent): string {
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
        ? `compacted session ${event.sessionId}: summary ${event.summaryId} stands for ${event.covered ?? 0} earlier nodes, ${event.kept ?? 0} kept verbatim (${event.tokensBefore ?? 0} -> ${event.tokensAfter ?? 0} tokens)`
        : `nothing to compact in session ${event.sessionId}: its history is already the most recent turns`;
    case "failed":
      return `compaction of session ${event.sessionId} failed: ${event.error ?? "unknown error"}`;
  }
}

/** A sink that writes each compaction event as a line on `stream` (other events pass by). */
export function createCompactionLines(stream: NodeJS.WritableStream): (event: SessionEvent) => void {
  return (event) => {
    if (event.type === "compaction") stream.write(`${compactionLine(event)}\n`);
  };
}
