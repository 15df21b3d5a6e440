import type { SessionEvent } from "@openprogram/session-context";
import { terminalText } from "@openprogram/session-context/messages";
import { nodeStatus } from "@openprogram/session-context/store";

const CLEAR_LINE = "\r\u001b[K";

/**
 * On a terminal, the text of the llm node streaming now as one line of
 * progress, rewritten in place (its latest characters, to the terminal's
 * width) and cleared before anything else is printed and when the node ends.
 */
export function createStreamingLine(
  stream: NodeJS.WritableStream & { columns?: number },
): (event: SessionEvent) => void {
  const texts = new Map<string, { name: string; text: string }>();
  let drawn = false;
  const clear = (): void => {
    if (!drawn) return;
    stream.write(CLEAR_LINE);
    drawn = false;
  };
  return (event) => {
    if (event.type === "node") {
      clear();
      if (event.node.role === "llm" && nodeStatus(event.node) === "running")
        texts.set(event.node.id, { name: event.node.name, text: "" });
      else texts.delete(event.node.id);
      return;
    }
    if (event.type !== "delta") {
      clear();
      return;
    }
    const entry = texts.get(event.nodeId);
    if (!entry) return;
    // Only the tail is ever shown: keep no more of it than a wide terminal needs.
    entry.text = (entry.text + event.text).slice(-1000);
    const label = terminalText(`model ${entry.name}: `);
    const room = Math.max(10, (stream.columns ?? 80) - label.length - 1);
    const flat = terminalText(entry.text.replace(/\s+/g, " ").trimStart());
    stream.write(`${CLEAR_LINE}${label}${flat.length > room ? `…${flat.slice(flat.length - room + 1)}` : flat}`);
    drawn = true;
  };
}
