import type { SessionDB } from "@openprogram/session-context";
import { branchTipRecord, checkoutHead, listBranches, nameBranch } from "@openprogram/session-context/store";
import type { Client } from "./client.js";
import type { BranchClientFrame, BranchesFrame } from "./branch-protocol.js";
import type { EventLogger } from "./logging.js";
import type { Subscriptions } from "./subscriptions.js";

/** What the branch frames need. */
export interface BranchFrameDependencies {
  db: SessionDB;
  subscriptions: Subscriptions;
  log: EventLogger;
}

/**
 * Answers `list_branches`, `checkout` and `name_branch` through the core
 * (listBranches, checkoutHead, nameBranch). A change is published to the
 * session's subscribers, so every page showing it follows; the core's
 * refusals (a summary, a node on no branch, a turn running) become `error`
 * frames with their codes.
 */
export async function handleBranchFrame(
  deps: BranchFrameDependencies,
  client: Client,
  frame: BranchClientFrame,
): Promise<void> {
  const { db, subscriptions, log } = deps;
  const sessionId = frame.session_id;
  const echo = frame.client_msg_id !== undefined ? { client_msg_id: frame.client_msg_id } : {};
  const toEveryone = (branches: BranchesFrame): void => {
    subscriptions.publish(sessionId, branches);
    if (!subscriptions.isSubscribed(client, sessionId)) client.send(branches);
  };
  switch (frame.type) {
    case "list_branches":
      client.send({ ...(await branchesFrame(db, sessionId)), ...echo });
      return;
    case "checkout": {
      const moved = await checkoutHead(sessionId, frame.node_id, { db });
      const headMoved = {
        type: "head_moved",
        session_id: sessionId,
        head_id: moved.headId,
        previous_head_id: moved.previousHeadId,
      } as const;
      subscriptions.publish(sessionId, headMoved);
      if (!subscriptions.isSubscribed(client, sessionId)) client.send(headMoved);
      toEveryone({ ...(await branchesFrame(db, sessionId)), ...echo });
      log.info("head_moved", { client: client.id, session_id: sessionId, head_id: moved.headId });
      return;
    }
    case "name_branch":
      await nameBranch(sessionId, frame.head_id, frame.name, { db });
      toEveryone({ ...(await branchesFrame(db, sessionId)), ...echo });
      log.info("branch_named", { client: client.id, session_id: sessionId, head_id: frame.head_id });
      return;
  }
}

async function branchesFrame(db: SessionDB, sessionId: string): Promise<BranchesFrame> {
  const tips = await listBranches(sessionId, { db });
  const meta = await db.readMeta(sessionId);
  return {
    type: "branches",
    session_id: sessionId,
    head_id: meta.head_id ?? null,
    branches: tips.map(branchTipRecord),
  };
}
