import type { SessionEvent } from "@openprogram/session-context";
import { compactionRecord } from "@openprogram/session-context/compaction";
import { toolRecord } from "@openprogram/session-context/store";

/**
 * `--events`: every event of the turn as one JSON line, in the shape of the
 * dispatcher's WebSocket frames (snake_case, `type` first), so a tool reads
 * the CLI's stream and the web's the same way.
 */
export function createEventLines(stream: NodeJS.WritableStream): (event: SessionEvent) => void {
  return (event) => stream.write(`${JSON.stringify(eventFrame(event))}\n`);
}

/** One event as a frame. */
export function eventFrame(event: SessionEvent): Record<string, unknown> {
  switch (event.type) {
    case "node":
      return { type: "node", session_id: event.sessionId, op: event.op, node: event.node };
    case "delta":
      return { type: "delta", session_id: event.sessionId, node_id: event.nodeId, text: event.text };
    case "retry":
      return {
        type: "retry",
        session_id: event.sessionId,
        node_id: event.nodeId,
        attempt: event.attempt,
        delay_ms: event.delayMs,
        reason: event.reason,
      };
    case "status":
      return { type: "status", session_id: event.sessionId, status: event.status };
    case "question":
      return {
        type: "question",
        session_id: event.sessionId,
        question_id: event.questionId,
        question: event.question,
        choices: event.choices,
        timeout_ms: event.timeoutMs,
      };
    case "question_closed":
      return {
        type: "question_closed",
        session_id: event.sessionId,
        question_id: event.questionId,
        outcome: event.outcome,
      };
    case "compaction":
      return compactionRecord(event);
    case "tool_call":
    case "tool_result":
      return toolRecord(event);
  }
}
