import type { NodeWriteListener, SessionNodeWriter } from "../store/node-writer.js";
import type { AppendOptions, NodeDraft, SessionNode } from "../store/types.js";

/**
 * How long the running llm node of a call inside an agentic function waits to be written once its request is out.
 * A reply that completes sooner (a local fake, a recording, a cache) is written once, completed, instead of twice
 * within a few milliseconds; listeners in the process see the same events either way (the running append, the
 * deltas, the update), and a crash before it is written leaves the request to be sent again, as a running node
 * found after a crash does. Any real model takes far longer, so its running node is there while it is asked.
 */
export const RUNNING_NODE_DELAY_MS = 10;

/** The delay in force (tests pin it to tell the two paths apart on a loaded machine). */
export const runningNodeDelay = { ms: RUNNING_NODE_DELAY_MS };

/** Tells listeners about a reply appended whole as if its running node had been written first. */
export type RunningAnnouncement = (node: SessionNode, listener: NodeWriteListener) => void;

/** What the call does when its running node is written (the reply's deltas may flow) or its write fails. */
export interface RunningNodeHooks {
  written: () => void;
  failed: (error: unknown) => void;
}

/**
 * A model call's `running` llm node: written as the request goes out, or held back for RUNNING_NODE_DELAY_MS and
 * then written unless the call's outcome came first (`skip`: the outcome is appended whole instead).
 */
export class RunningNode {
  /** The write under way or done (rejects with its failure); resolved while nothing was written. */
  private written: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly writer: SessionNodeWriter,
    readonly draft: NodeDraft,
    private readonly options: AppendOptions,
    private readonly hooks: RunningNodeHooks,
  ) {}

  /** Writes the node once `before` has landed (a chat turn's user node), at once or after the delay (`deferred`). */
  begin(before: Promise<unknown>, deferred: boolean): void {
    this.written = before.then(
      () => {
        if (!deferred) return this.write();
        this.timer = setTimeout(() => void this.writeNow().catch(() => undefined), runningNodeDelay.ms).unref();
      },
      (error: unknown) => {
        this.hooks.failed(error);
        throw error;
      },
    );
    this.written.catch(() => undefined); // awaited by the call's later steps; this only marks it handled meanwhile
  }

  /** Resolves once the node's write (one its delay began meanwhile included) has landed; rejects with its failure. */
  async settled(): Promise<void> {
    let current: Promise<void>;
    do {
      current = this.written;
      await current;
    } while (current !== this.written);
  }

  /** Writes a node still held back now (a retry is about to be reported against it); then as settled. */
  writeNow(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.written = this.write();
      this.written.catch(() => undefined);
    }
    return this.settled();
  }

  /**
   * The node, still held back, will never be written: the outcome is appended whole instead, and listeners are told
   * what they would have been told (the running append, the deltas held meanwhile, the update). Null when the node
   * was written (or is being written): the outcome updates it. Call after `settled`.
   */
  skip(): RunningAnnouncement | null {
    if (!this.timer) return null;
    clearTimeout(this.timer);
    this.timer = null;
    const { draft } = this;
    return (node, listener) => {
      const metadata = Object.freeze({ ...draft.metadata });
      const reads = Object.freeze([...(draft.reads ?? [])]) as string[];
      listener("append", Object.freeze({ ...node, output: null, metadata, reads }));
      this.hooks.written();
      listener("update", node);
    };
  }

  private write(): Promise<void> {
    return this.writer.append(this.draft, this.options).then(
      () => this.hooks.written(),
      (error: unknown) => {
        this.hooks.failed(error);
        throw error;
      },
    );
  }
}
