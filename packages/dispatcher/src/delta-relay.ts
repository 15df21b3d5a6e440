import type { DeltaFrame } from "./protocol.js";

/** At most one delta frame per streaming node this often: a fast model must not mean one frame per token. */
export const DELTA_INTERVAL_MS = 30;

/** One llm node's reply as it streams through the dispatcher. */
interface NodeStream {
  /** Everything received so far. */
  text: string;
  /** How much of `text` its clients have been sent. */
  sent: number;
  lastSentAt: number;
  timer: NodeJS.Timeout | null;
}

/**
 * Coalesces the core's delta events into `delta` frames for a session's
 * clients (one frame per node per interval, the first at once) and keeps each
 * streaming node's text so far, so a client that subscribes mid-stream gets
 * that text in one frame and then the same frames as everyone else: nothing
 * missing, nothing twice.
 */
export class DeltaRelay {
  private readonly bySession = new Map<string, Map<string, NodeStream>>();

  constructor(
    private readonly publish: (sessionId: string, frame: DeltaFrame) => void,
    private readonly intervalMs = DELTA_INTERVAL_MS,
  ) {}

  /** A piece of a reply from the core. */
  add(sessionId: string, nodeId: string, text: string): void {
    let nodes = this.bySession.get(sessionId);
    if (!nodes) this.bySession.set(sessionId, (nodes = new Map<string, NodeStream>()));
    let stream = nodes.get(nodeId);
    if (!stream) nodes.set(nodeId, (stream = { text: "", sent: 0, lastSentAt: -Infinity, timer: null }));
    stream.text += text;
    if (stream.timer !== null) return;
    const wait = stream.lastSentAt + this.intervalMs - performance.now();
    if (wait <= 0) this.flush(sessionId, nodeId, stream);
    else stream.timer = setTimeout(() => this.flush(sessionId, nodeId, stream), wait);
  }

  /** The node's reply ended (its final node frame follows): send what is pending, then forget it. */
  end(sessionId: string, nodeId: string): void {
    const nodes = this.bySession.get(sessionId);
    const stream = nodes?.get(nodeId);
    if (!nodes || !stream) return;
    this.flush(sessionId, nodeId, stream);
    nodes.delete(nodeId);
    if (nodes.size === 0) this.bySession.delete(sessionId);
  }

  /** The turn ended: ends every stream it left (a reply whose final write failed). */
  endSession(sessionId: string): void {
    for (const nodeId of [...(this.bySession.get(sessionId)?.keys() ?? [])]) this.end(sessionId, nodeId);
  }

  /** For a client subscribing now: each streaming node's text sent so far, one frame per node. */
  catchUp(sessionId: string): DeltaFrame[] {
    const frames: DeltaFrame[] = [];
    for (const [nodeId, stream] of this.bySession.get(sessionId) ?? []) {
      if (stream.sent > 0) frames.push(deltaFrame(sessionId, nodeId, stream.text.slice(0, stream.sent)));
    }
    return frames;
  }

  /** Nodes streaming now, across sessions (for tests and metrics). */
  get streamingCount(): number {
    let count = 0;
    for (const nodes of this.bySession.values()) count += nodes.size;
    return count;
  }

  private flush(sessionId: string, nodeId: string, stream: NodeStream): void {
    if (stream.timer !== null) clearTimeout(stream.timer);
    stream.timer = null;
    if (stream.text.length === stream.sent) return;
    const text = stream.text.slice(stream.sent);
    stream.sent = stream.text.length;
    stream.lastSentAt = performance.now();
    this.publish(sessionId, deltaFrame(sessionId, nodeId, text));
  }
}

function deltaFrame(sessionId: string, nodeId: string, text: string): DeltaFrame {
  return { type: "delta", session_id: sessionId, node_id: nodeId, text };
}
