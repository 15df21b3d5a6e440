import type { SessionNodeWriter } from "../store/node-writer.js";
import type { AppendOptions, NodeDraft, NodeUpdateWrite, SessionNode } from "../store/types.js";

/**
 * The update recording a reply that asked for tools, held until the first of its tools' nodes is written: the two go
 * to the store as one write (one lock section, one append to the write-ahead log and to the journal, one fdatasync)
 * instead of two in a row; both files are still renamed into place, the reply's first. Whatever writes something
 * else first (an approval's question, an agentic tool's own nodes, a budget's note, the loop's end) flushes it on its
 * own first; a later write to the session queues behind it on the session lock either way.
 */
export class ReplyWrite {
  private held: NodeUpdateWrite | null;
  /** The write that took the reply, once one has. */
  private landed: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly writer: SessionNodeWriter,
    update: NodeUpdateWrite | null,
  ) {
    this.held = update;
  }

  /** Appends `draft`, with the reply written before it in the same write while the reply is still held. */
  async append(draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    const held = this.take();
    if (!held) return this.writer.append(draft, options);
    const written = this.writer.writeNodes([held, { op: "append", draft, options }]);
    this.landed = written;
    return (await written)[1] as SessionNode;
  }

  /** Writes the reply now if it is still held; resolves once whichever write took it has landed. */
  async flush(): Promise<void> {
    const held = this.take();
    if (held) this.landed = this.writer.update(held.nodeId, held.patch, held.options);
    await this.landed;
  }

  private take(): NodeUpdateWrite | null {
    const held = this.held;
    this.held = null;
    return held;
  }
}
