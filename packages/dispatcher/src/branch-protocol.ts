// The branch frames of the dispatcher's protocol (README.md, "Branches"):
// list a session's branch tips, move its head, name a tip. Edit and resend is
// the `chat` frame with `from`.
import type { BranchTipRecord } from "@openprogram/session-context/store";
import type { z } from "zod";
import type * as schemas from "./client-frames.js";
import type { FrameOf } from "./client-frames.js";
import type * as frames from "./server-frames.js";

/** Lists the session's branch tips; answered with `branches`. */
export type ListBranchesFrame = FrameOf<typeof schemas.listBranchesFrame>;
/** Moves the session's head to a node of one of its branches; `head_moved` and `branches` follow. */
export type CheckoutFrame = FrameOf<typeof schemas.checkoutFrame>;
/** Names a branch tip (meta.json `branches`, as Python OpenProgram keeps names); `branches` follows. */
export type NameBranchFrame = FrameOf<typeof schemas.nameBranchFrame>;

/** The branch frames a client may send. */
export type BranchClientFrame = ListBranchesFrame | CheckoutFrame | NameBranchFrame;

/** One branch tip: the core's wire form of a BranchTip (`active`: the head is this tip; `trunk`: the trunk's tip). */
export type BranchInfo = BranchTipRecord;

/** The session's branch tips, newest first, and its head (which may be a turn before a tip). */
export type BranchesFrame = z.output<typeof frames.branchesFrame>;

/** The session's head moved (to the client that asked and the session's subscribers). */
export type HeadMovedFrame = z.output<typeof frames.headMovedFrame>;

/** The branch frames the server sends. */
export type BranchServerFrame = BranchesFrame | HeadMovedFrame;
