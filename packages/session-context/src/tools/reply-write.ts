import type { NodeWriteListener, SessionNodeWriter } from "../store/node-writer.js";
import type { AppendOptions, NodeDraft, NodeWrite, SessionNode } from "../store/types.js";

/**
 * The write recording a reply (ModelCall.completion): an update of its running node, or, when the reply came
 * before that node was written, the append of the completed node with how it is announced to listeners.
 */
export interface ReplyRecord {
  readonly write: NodeWrite;
  readonly announce?: ((node: SessionNode, listener: NodeWriteListener) => void) | undefined;
}

/**
 * The write recording a reply that asked for tools, held until the first of its tools' nodes is written: the two go
 * to the store as one write (one lock section, one append to the write-ahead log and to the journal, one fdatasync)
 * instead of two in a row; both files are still renamed into place, the reply's first. Whatever writes something
 * else first (an approval's question, an agentic tool's own nodes, a budget's note, the loop's end) flushes it on its
 * own first; a later write to the session queues behind it on the session lock either way.
 */
export class ReplyWrite {
  private held: ReplyRecord | null;
  /** The write that took the reply, once one has. */
  private landed: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly writer: SessionNodeWriter,
    record: ReplyRecord | null,
  ) {
    this.held = record;
  }

  /** Appends `draft`, with the reply written before it in the same write while the reply is still held. */
  async append(draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    const held = this.take();
    if (!held) return this.writer.append(draft, options);
    const written = this.writer.writeNodes([held.write, { op: "append", draft, options }], [held.announce]);
    this.landed = written;
    return (await written)[1] as SessionNode;
  }

  /** Writes the reply now if it is still held; resolves once whichever write took it has landed. */
  async flush(): Promise<void> {
    const held = this.take();
    if (held) this.landed = this.writer.writeNodes([held.write], [held.announce]);
    await this.landed;
  }

  private take(): ReplyRecord | null {
    const held = this.held;
    this.held = null;
    return held;
  }
}
