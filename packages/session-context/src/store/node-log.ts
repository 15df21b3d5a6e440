import { InvalidNodeError, NodeNotFoundError } from "../errors.js";
import { nowSeconds } from "../time/now-seconds.js";
import { heldFileDelay } from "./held-files.js";
import { historyProblems, orderedNodes } from "./history.js";
import { reportStoreProblem } from "./registry.js";
import type { StoreState } from "./store-state.js";
import { liveTurnLeases } from "./turn-lease.js";
import type {
  AppendOptions,
  NodeDraft,
  NodePatch,
  NodeWrite,
  SessionHistory,
  SessionMeta,
  SessionNode,
  UpdateOptions,
} from "./types.js";
import { walkBranch } from "./walk-branch.js";

/** A fresh, shared, read-only view of a session's nodes, by id and in seq order. */
export interface NodeSnapshot {
  byId: ReadonlyMap<string, SessionNode>;
  ordered: readonly SessionNode[];
}

/**
 * A session's node log: writing nodes (each under the session lock, with
 * meta.json's head moved beside the node that extends it) and reading them
 * through the cached history (history.ts keeps it exact by the session's
 * change journal). See SessionDB for each public method.
 */
export class NodeLog {
  constructor(private readonly state: StoreState) {}

  async append(sessionId: string, draft: NodeDraft, options: AppendOptions): Promise<SessionNode> {
    const [node] = await this.writeNodes(sessionId, [{ op: "append", draft, options }]);
    return node as SessionNode;
  }

  async update(sessionId: string, nodeId: string, patch: NodePatch, options: UpdateOptions): Promise<SessionNode> {
    const [node] = await this.writeNodes(sessionId, [{ op: "update", nodeId, patch, options }]);
    return node as SessionNode;
  }

  /**
   * Appends and updates, each under the session lock with meta.json's head moved beside the node that extends it,
   * as one write (HistoryFiles.writeNodes): one lock section, one append to the write-ahead log, fdatasynced once
   * unless every write defers its name's sync. Only the first write may move the head (a later one would need
   * meta.json as the first left it). Resolves to the nodes as written, in order.
   */
  async writeNodes(sessionId: string, writes: readonly NodeWrite[]): Promise<SessionNode[]> {
    const { state } = this;
    const paths = state.requirePaths(sessionId);
    return state.withSessionLock(sessionId, async () => {
      const view = state.history.refresh(paths);
      // Read once: the head a node links to and the meta.json written beside it when it moves the head.
      let meta: SessionMeta | undefined;
      const readMeta = (): SessionMeta => (meta ??= state.readMetaSync(sessionId));
      const updatedAt = nowSeconds();
      const appended: SessionNode[] = [];
      let movedHead = false;
      const prepared = writes.map((write, index) => {
        const { node, fileName, moves } = this.prepareOne(sessionId, view, write, readMeta, appended);
        if (write.op === "append") appended.push(node);
        if (moves && index > 0)
          throw new InvalidNodeError("Only the first write of a batch may move the session's head.");
        movedHead ||= moves;
        const alongside = moves
          ? [state.metaWrite(sessionId, readMeta(), { head_id: node.id, updated_at: updatedAt })]
          : [];
        const hold = write.op === "append" && write.options?.holdFile === true;
        return { node, fileName, alongside, hold };
      });
      const durable = writes.some((write) => write.options?.deferNameSync !== true);
      await state.history.writeNodes(paths, view, prepared, durable);
      if (movedHead) state.metaStamps.record(paths, updatedAt);
      if (state.history.held.has(paths)) this.placeHeldSoon(sessionId);
      return prepared.map(({ node }) => node);
    });
  }

  /**
   * Puts the session's held files in place HELD_FILE_DELAY_MS from now, unless a write replaced them first (the
   * usual case: a tool's result). Not unref'd: a process does not exit with a file only its log holds.
   */
  private placeHeldSoon(sessionId: string): void {
    const { state } = this;
    const paths = state.requirePaths(sessionId);
    setTimeout(() => {
      if (!state.history.held.has(paths)) return;
      state
        .withSessionLock(sessionId, () => state.history.placeHeld(paths))
        .catch((error: unknown) =>
          reportStoreProblem(
            `Held node files of ${paths.dir} could not be put in place yet (${(error as Error).message}); its log holds them.`,
          ),
        );
    }, heldFileDelay.ms);
  }

  /** One write of a batch, prepared against the view: the node, its file, and whether it moves the head. */
  private prepareOne(
    sessionId: string,
    view: ReturnType<StoreState["history"]["refresh"]>,
    write: NodeWrite,
    readMeta: () => SessionMeta,
    appended: readonly SessionNode[],
  ): { node: SessionNode; fileName: string; moves: boolean } {
    const { history } = this.state;
    if (write.op === "append") {
      const { node, fileName, movedHead } = history.prepareAppend(
        view,
        write.draft,
        write.options ?? {},
        readMeta,
        appended,
      );
      return { node, fileName, moves: movedHead };
    }
    const { node, fileName } = history.prepareUpdate(view, sessionId, write.nodeId, write.patch);
    // Only a reply that still extends the head moves it: a branch made meanwhile keeps its place.
    const predecessor = node.predecessor === "ROOT" ? null : node.predecessor;
    const moves =
      write.options?.advanceHead === true && node.caller === "" && (readMeta().head_id ?? null) === predecessor;
    return { node, fileName, moves };
  }

  async updateIf(
    sessionId: string,
    nodeId: string,
    decide: (node: SessionNode, liveTurnIds: readonly string[]) => NodePatch | null,
  ): Promise<SessionNode | null> {
    const { state } = this;
    const paths = state.requirePaths(sessionId);
    return state.withSessionLock(sessionId, async () => {
      const node = state.history.refresh(paths).byId.get(nodeId);
      if (!node) throw new NodeNotFoundError(sessionId, nodeId);
      const patch = decide(node, liveTurnLeases(paths));
      return patch === null ? null : state.history.update(paths, sessionId, nodeId, patch);
    });
  }

  async readHistory(sessionId: string): Promise<SessionHistory> {
    // A session not yet cached is read with the event loop let through (a server's other clients wait less).
    const history = await this.state.history.refreshYielding(this.state.requirePaths(sessionId));
    return { nodes: [...orderedNodes(history)], problems: historyProblems(history) };
  }

  readHistorySync(sessionId: string): SessionHistory {
    const history = this.state.history.refresh(this.state.requirePaths(sessionId));
    return { nodes: [...orderedNodes(history)], problems: historyProblems(history) };
  }

  /** The core's prompt rendering reads this on every exec: no copying. */
  snapshot(sessionId: string): NodeSnapshot {
    const history = this.state.history.refresh(this.state.requirePaths(sessionId));
    return { byId: history.byId, ordered: orderedNodes(history) };
  }

  nodeMap(sessionId: string): ReadonlyMap<string, SessionNode> {
    return this.state.history.refresh(this.state.requirePaths(sessionId)).byId;
  }

  /** nodeMap for the async readers: a session not yet cached is read with the event loop let through. */
  async nodeMapYielding(sessionId: string): Promise<ReadonlyMap<string, SessionNode>> {
    return (await this.state.history.refreshYielding(this.state.requirePaths(sessionId))).byId;
  }

  async branch(sessionId: string, fromNodeId?: string | null): Promise<SessionNode[]> {
    const start = fromNodeId === undefined ? this.state.readMetaSync(sessionId).head_id : fromNodeId;
    return walkBranch(await this.nodeMapYielding(sessionId), start);
  }
}
