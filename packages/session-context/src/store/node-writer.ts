import type { SessionDB } from "./session-db.js";
import type { AppendOptions, NodeDraft, NodePatch, NodeWrite, SessionNode, UpdateOptions } from "./types.js";
import { storeInternals } from "./internal.js";

/** Called after each write, so adapters can stream the DAG as it grows. */
export type NodeWriteListener = (op: "append" | "update", node: SessionNode) => void;

/** Hooks a context puts around writes: begin the turn first, report each write after. */
export interface NodeWriterHooks {
  beforeWrite?: () => Promise<void>;
  afterWrite?: NodeWriteListener;
}

/**
 * The thin handle deeper code writes a session's DAG through: it fixes the
 * session id and tells a listener about every write.
 */
export class SessionNodeWriter {
  constructor(
    readonly db: SessionDB,
    readonly sessionId: string,
    private readonly hooks: NodeWriterHooks = {},
  ) {}

  /** Appends a node (see SessionDB.appendNode). */
  async append(draft: NodeDraft, options: AppendOptions = {}): Promise<SessionNode> {
    await this.hooks.beforeWrite?.();
    const node = await this.db.appendNode(this.sessionId, draft, options);
    this.hooks.afterWrite?.("append", node);
    return node;
  }

  /** Updates a node (see SessionDB.updateNode). */
  async update(nodeId: string, patch: NodePatch, options: UpdateOptions = {}): Promise<SessionNode> {
    await this.hooks.beforeWrite?.();
    const node = await this.db.updateNode(this.sessionId, nodeId, patch, options);
    this.hooks.afterWrite?.("update", node);
    return node;
  }

  /**
   * Appends and updates several nodes as one write, in order (see StoreInternals.writeNodes). `announce[i]`, when
   * given, tells the listener about the i-th node instead of the usual one report (a reply written once, completed,
   * is reported as its running append and then its update: ModelCall).
   */
  async writeNodes(
    writes: readonly NodeWrite[],
    announce: ReadonlyArray<((node: SessionNode, listener: NodeWriteListener) => void) | undefined> = [],
  ): Promise<SessionNode[]> {
    await this.hooks.beforeWrite?.();
    const nodes = await storeInternals(this.db).writeNodes(this.sessionId, writes);
    const listener: NodeWriteListener = (op, node) => this.hooks.afterWrite?.(op, node);
    nodes.forEach((node, index) => {
      const own = announce[index];
      if (own) own(node, listener);
      else listener(writes[index]?.op ?? "update", node);
    });
    return nodes;
  }

  /** Updates a node only if `decide` returns a patch for it as stored now (see SessionDB.updateNodeIf); null: unchanged. */
  async updateIf(nodeId: string, decide: (node: SessionNode) => NodePatch | null): Promise<SessionNode | null> {
    await this.hooks.beforeWrite?.();
    const node = await this.db.updateNodeIf(this.sessionId, nodeId, (current) => decide(current));
    if (node) this.hooks.afterWrite?.("update", node);
    return node;
  }

  /** All nodes of the session, in seq order. */
  async load(): Promise<SessionNode[]> {
    return storeInternals(this.db).readHistorySync(this.sessionId).nodes;
  }
}
