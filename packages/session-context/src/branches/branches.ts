import { isSummaryNode } from "../compaction/summary-node.js";
import {
  InvalidInputError,
  NodeNotFoundError,
  NodeNotOnBranchError,
  SessionBusyError,
  SummaryHeadError,
} from "../errors.js";
import { activeContext } from "../context/storage.js";
import { nowSeconds } from "../time/now-seconds.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionNode } from "../store/types.js";
import { isTipCandidate, listBranchTips, type BranchTip } from "./branch-tips.js";

export type { BranchTip } from "./branch-tips.js";

/** Which store to use; default the enclosing context's (as `compactSession`), else `openStore()`. */
export interface BranchStoreOption {
  db?: SessionDB;
}

/** A program calling these inside a session context (in-process or in a child) means that context's store. */
function storeOf(options: BranchStoreOption): SessionDB {
  return options.db ?? activeContext()?.db ?? openStore();
}

/** The longest branch name Python OpenProgram's web page accepts. */
export const MAX_BRANCH_NAME_LENGTH = 80;

/** The session's branch tips, newest first, as Python lists them; `active` marks the head's. */
export async function listBranches(sessionId: string, options: BranchStoreOption = {}): Promise<BranchTip[]> {
  const internals = storeInternals(storeOf(options));
  const meta = internals.readMetaSync(sessionId);
  return listBranchTips(internals.snapshotSync(sessionId).ordered, meta);
}

/**
 * Moves the session's head (meta.json `head_id`) to `nodeId`, so the next
 * turn continues that node's branch; resolves to the head it replaced. Any
 * node on a conversation branch may be the head (a tip, or an earlier turn to
 * continue from there); refused: an unknown id (NodeNotFoundError), a summary
 * (SummaryHeadError, as Python refuses it), a node on no branch such as a
 * call's inner exchange (NodeNotOnBranchError), and a session running a turn
 * in any process (SessionBusyError). The change is committed.
 */
export async function checkoutHead(
  sessionId: string,
  nodeId: string,
  options: BranchStoreOption = {},
): Promise<{ headId: string; previousHeadId: string | null }> {
  const db = storeOf(options);
  const internals = storeInternals(db);
  const previous = await internals.withSessionLock(sessionId, async () => {
    const node = requireBranchNode(db, sessionId, nodeId);
    if (internals.liveTurnIds(sessionId).length > 0)
      throw new SessionBusyError(sessionId, "a turn is running; moving the head now would strand its reply");
    const before = internals.readMetaSync(sessionId).head_id ?? null;
    if (before !== node.id) await internals.patchMetaLocked(sessionId, { head_id: node.id });
    return before;
  });
  if (previous !== nodeId) await db.commitTurn(sessionId, `checkout ${nodeId}`);
  return { headId: nodeId, previousHeadId: previous };
}

/**
 * Names a branch tip in meta.json `branches`, as Python's web page does when
 * a user names one: `{name, created_at, updated_at, name_locked: true}`, the
 * entry merged (other fields kept, `created_at` kept once set). The name is
 * trimmed, 1-80 characters. Resolves to the tip as listed afterwards.
 */
export async function nameBranch(
  sessionId: string,
  tipId: string,
  name: string,
  options: BranchStoreOption = {},
): Promise<BranchTip> {
  const db = storeOf(options);
  const internals = storeInternals(db);
  const trimmed = typeof name === "string" ? name.trim() : "";
  if (trimmed === "") throw new InvalidInputError("A branch name must be a non-empty string.");
  if (trimmed.length > MAX_BRANCH_NAME_LENGTH)
    throw new InvalidInputError(
      `A branch name is at most ${MAX_BRANCH_NAME_LENGTH} characters; this one has ${trimmed.length}.`,
    );
  await internals.withSessionLock(sessionId, async () => {
    const meta = internals.readMetaSync(sessionId);
    const ordered = internals.snapshotSync(sessionId).ordered;
    if (!ordered.some((node) => node.id === tipId)) throw new NodeNotFoundError(sessionId, tipId);
    // Names are Python's data, keyed by the tips its panel lists: the turn a program run continues is one of them.
    if (!listBranchTips(ordered, meta, { runsContinue: false }).some((tip) => tip.headId === tipId))
      throw new NodeNotOnBranchError(sessionId, tipId, "is not a branch tip (a later turn continues it)");
    const branches = { ...((meta.branches ?? {}) as Record<string, unknown>) };
    const current = branches[tipId];
    const entry = current !== null && typeof current === "object" ? { ...(current as Record<string, unknown>) } : {};
    const now = nowSeconds();
    entry.name = trimmed;
    entry.created_at ??= now;
    entry.updated_at = now;
    // A name a user typed: Python's automatic branch namer leaves a locked name alone.
    entry.name_locked = true;
    branches[tipId] = entry;
    await internals.patchMetaLocked(sessionId, { branches });
  });
  await db.commitTurn(sessionId, `name branch ${tipId}`);
  const tips = listBranchTips(internals.snapshotSync(sessionId).ordered, internals.readMetaSync(sessionId), {
    runsContinue: false,
  });
  return tips.find((candidate) => candidate.headId === tipId) as BranchTip;
}

/** The node, if it exists and can be the head; else the error saying why not. */
function requireBranchNode(db: SessionDB, sessionId: string, nodeId: string): SessionNode {
  const nodes = storeInternals(db).nodeMapSync(sessionId);
  const node = nodes.get(nodeId);
  if (!node) throw new NodeNotFoundError(sessionId, nodeId);
  if (isSummaryNode(node)) throw new SummaryHeadError(sessionId, nodeId);
  if (!isTipCandidate(node, nodes))
    throw new NodeNotOnBranchError(
      sessionId,
      nodeId,
      node.name.startsWith("context/")
        ? "is context machinery, not a conversation turn"
        : "is made inside a function run, not a conversation turn",
    );
  return node;
}

/**
 * Where edit and resend of `nodeId` forks: the predecessor of the nearest
 * user turn at or above it (Python walks up from a reply to its message), or
 * "ROOT" for the session's first message. Returns the edited message's id too.
 */
export function editForkPoint(
  nodes: ReadonlyMap<string, SessionNode>,
  sessionId: string,
  nodeId: string,
): { editedId: string; predecessor: string } {
  let node = nodes.get(nodeId);
  if (!node) throw new NodeNotFoundError(sessionId, nodeId);
  if (!isTipCandidate(node, nodes) || node.caller !== "")
    throw new NodeNotOnBranchError(sessionId, nodeId, "is not a top-level conversation turn, so it cannot be edited");
  const seen = new Set<string>();
  while (node && node.role !== "user" && !seen.has(node.id)) {
    seen.add(node.id);
    node = node.predecessor === null ? undefined : nodes.get(node.predecessor);
  }
  if (!node || node.name === "ask_user")
    throw new NodeNotOnBranchError(sessionId, nodeId, "has no user message at or before it to edit");
  const predecessor = node.predecessor === null || node.predecessor === "" ? "ROOT" : node.predecessor;
  return { editedId: node.id, predecessor };
}
