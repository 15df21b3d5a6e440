import { isPendingQuestion } from "../store/abandoned-turn.js";
import type { SessionNode } from "../store/types.js";

/**
 * Errors that say a call failed for a reason that may not recur (the model,
 * the store, a question, a cancellation): a call that failed with one of them
 * runs again on resume instead of failing again from the record.
 */
const PASSING_FAILURES: ReadonlySet<string> = new Set([
  "cancelled",
  "turn_suspended",
  "provider_error",
  "provider_config",
  "runtime_missing",
  "script_exhausted",
  "store_write_failed",
  "store_lock_timeout",
  "git_failed",
  "session_busy",
  "ask_user_unavailable",
  "ask_timeout",
  "user_declined",
  "invalid_answer",
  "internal_error",
  // The research harness's artifact writes (write_artifact): the disk may have room, or the folder may be fixed, now.
  "artifact_write_failed",
  // The process runner's child crashed or ran out of time, and a server's turn lost its lease or its replica: the
  // machine failed, not the program (codes of the adapters, named here as strings: the core does not import them).
  "child_process_failed",
  "child_timeout",
  "lease_lost",
  "replica_unreachable",
  "shutting_down",
  "database_unavailable",
  // A budget or a provider's capacity stopped the call: resumed after the budget is raised, or when there is room.
  "budget_exceeded",
  "rate_limited",
]);

/** True when a call that failed with this code runs again on resume (the reason may not recur); false: replayed. */
export function isPassingFailure(code: string): boolean {
  return PASSING_FAILURES.has(code);
}

/** What `metadata.resumes` holds on a call that continues one of an interrupted turn. */
export interface ResumesLink {
  turn_id: string;
  node_id: string;
}

/**
 * A read-only view of a session's record built for resuming: the calls of
 * each caller in program order, where a call that continued an interrupted
 * one (`metadata.resumes`) also counts the calls it took over from it.
 */
export class RecordView {
  private readonly children = new Map<string, SessionNode[]>();
  private readonly logical = new Map<string, readonly SessionNode[]>();
  private readonly reusable = new Map<string, boolean>();
  /** Top-level calls that carry a turn id, in seq order. */
  readonly turnCalls: SessionNode[] = [];

  constructor(
    readonly byId: ReadonlyMap<string, SessionNode>,
    ordered: readonly SessionNode[],
  ) {
    for (const node of ordered) {
      if (node.caller === "") {
        if (node.role === "code" && typeof node.metadata.turn_id === "string") this.turnCalls.push(node);
        continue;
      }
      let list = this.children.get(node.caller);
      if (!list) this.children.set(node.caller, (list = []));
      list.push(node);
    }
  }

  /** The top-level calls of one turn, in seq order. */
  topLevelOf(turnId: string): SessionNode[] {
    return this.turnCalls.filter((node) => node.metadata.turn_id === turnId);
  }

  /**
   * The calls made under `nodeId`, in program order. A node that continued an
   * interrupted call made, before its own, the calls it reused from that one:
   * the longest prefix of them that a replay reuses (for a program that did
   * the same things again, exactly the calls reused).
   */
  logicalChildren(nodeId: string): readonly SessionNode[] {
    const known = this.logical.get(nodeId);
    if (known) return known;
    this.logical.set(nodeId, []); // a resumes loop ends here
    const own = this.children.get(nodeId) ?? [];
    const resumed = resumesLink(this.byId.get(nodeId))?.node_id;
    let result: readonly SessionNode[] = own;
    if (resumed !== undefined && this.byId.has(resumed)) {
      const inherited = this.logicalChildren(resumed);
      let reused = 0;
      while (reused < inherited.length && this.continuesLineage(inherited[reused] as SessionNode)) reused++;
      result = [...inherited.slice(0, reused), ...own];
    }
    this.logical.set(nodeId, result);
    return result;
  }

  /**
   * True when replay may return this node's recorded outcome instead of
   * running it: a completed model call, an answered question (or one that
   * timed out to its default), a completed call whose result was recorded
   * exactly, or a call that failed for a reason of its own (not a passing one,
   * and nothing under it stopped short).
   */
  isReusable(node: SessionNode): boolean {
    const known = this.reusable.get(node.id);
    if (known !== undefined) return known;
    this.reusable.set(node.id, false); // a caller loop is never reusable
    const result = this.computeReusable(node);
    this.reusable.set(node.id, result);
    return result;
  }

  /** Questions still waiting under `nodeId` (its whole logical subtree), in program order. */
  pendingQuestions(nodeId: string): SessionNode[] {
    const found: SessionNode[] = [];
    const seen = new Set<string>();
    const visit = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const child of this.logicalChildren(id)) {
        if (isPendingQuestion(child)) found.push(child);
        // A tool's approval waits under the reply that asked for the tool.
        else if (child.role === "code" || child.role === "llm") visit(child.id);
      }
    };
    visit(nodeId);
    return found;
  }

  /** How many model requests (llm nodes) were made under `nodeId`, its whole logical subtree. */
  modelCallsUnder(nodeId: string): number {
    let count = 0;
    const seen = new Set<string>();
    const visit = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const child of this.logicalChildren(id)) {
        if (child.role === "llm") count++;
        if (child.role === "llm" || child.role === "code") visit(child.id);
      }
    };
    visit(nodeId);
    return count;
  }

  /**
   * How many recorded steps under `nodeId` a resume would return from the record instead of running them: the
   * model calls, answers and calls that finished or failed for a reason of their own (a call counts once, with
   * everything under it).
   */
  finishedUnder(nodeId: string): number {
    let count = 0;
    const seen = new Set<string>();
    const visit = (id: string): void => {
      if (seen.has(id)) return;
      seen.add(id);
      for (const child of this.logicalChildren(id)) {
        if (this.isReusable(child)) count++;
        // The tools a reply asked for (and their approvals) hang under it: a reused reply's are steps of their own.
        if (child.role === "llm" || (child.role === "code" && !this.isReusable(child))) visit(child.id);
      }
    };
    visit(nodeId);
    return count;
  }

  private continuesLineage(node: SessionNode): boolean {
    return this.isReusable(node) || isPendingQuestion(node);
  }

  private computeReusable(node: SessionNode): boolean {
    const status = node.metadata.status;
    if (node.role === "llm") return status === "completed" && typeof node.output === "string";
    if (node.role === "user") {
      if (node.name !== "ask_user") return false;
      return status === "answered" || (status === "timed_out" && node.metadata.used_default === true);
    }
    if (node.metadata.output_exact === false) return false;
    if (status === "completed") return true;
    if (status !== "failed") return false;
    const code = (node.metadata.error as { code?: unknown } | undefined)?.code;
    if (typeof code !== "string" || PASSING_FAILURES.has(code)) return false;
    return this.logicalChildren(node.id).every((child) => this.isReusable(child));
  }
}

/** The `metadata.resumes` link of a node, if it has a well-formed one. */
export function resumesLink(node: SessionNode | undefined): ResumesLink | null {
  const link = node?.metadata.resumes as Partial<ResumesLink> | null | undefined;
  if (!link || typeof link !== "object" || typeof link.node_id !== "string" || typeof link.turn_id !== "string")
    return null;
  return { turn_id: link.turn_id, node_id: link.node_id };
}
