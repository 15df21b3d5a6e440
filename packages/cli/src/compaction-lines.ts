import type { SessionEvent } from "@openprogram/session-context";
import { describeCompaction } from "@openprogram/session-context/compaction";
import { writeLine } from "./output.js";

/**
 * A sink that writes each compaction event as a line on `stream` (other events pass by): the user sees why
 * the next reply reads a summary, in the core's wording, the same sentence the web page shows.
 */
export function createCompactionLines(stream: NodeJS.WritableStream): (event: SessionEvent) => void {
  return (event) => {
    if (event.type === "compaction") writeLine(stream, describeCompaction(event));
  };
}
