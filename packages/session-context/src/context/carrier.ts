import type { Budgets } from "../budgets/budget-types.js";
import type { LimitsConfig } from "../budgets/provider-limits.js";
import { createHash } from "node:crypto";
import { InvalidInputError } from "../errors.js";
import { assertValidSessionId } from "../ids.js";
import type { SessionDB } from "../store/session-db.js";
import type { TurnProgram } from "../turns/program-ref.js";
import { RecordView } from "../turns/record-view.js";
import { Replay, type ReplayCarrier } from "../turns/replay.js";
import { callIdOf } from "./accessors.js";
import { traceparentOf } from "../telemetry/spans.js";
import { activeContext } from "./storage.js";
import type { ActiveContext } from "./types.js";
import { storeInternals } from "../store/internal.js";

/** Environment variables that carry a session context into a child process. */
export const CARRIER_VARIABLES = {
  sessionId: "OPENPROGRAM_SESSION_ID",
  turnId: "OPENPROGRAM_TURN_ID",
  callerId: "OPENPROGRAM_CALLER_ID",
  sessionsRoot: "OPENPROGRAM_SESSIONS_ROOT",
  traceparent: "TRACEPARENT",
  /** The program the turn runs (its ref), so a child's top-level call records it. */
  program: "OPENPROGRAM_PROGRAM",
  /**
   * While the turn resumes an interrupted one: what the child needs to carry on replaying (JSON). Not
   * OPENPROGRAM_REPLAY, which names a recording of model calls to answer from (issue 34).
   */
  replay: "OPENPROGRAM_RESUME_REPLAY",
  /** "1" when every tool call of the turn runs without asking (`run --approve-tools`). */
  approveTools: "OPENPROGRAM_APPROVE_TOOLS",
  /** The turn's budgets and the provider limits, as JSON (issue 36): a child's model calls are checked too. */
  budgets: "OPENPROGRAM_BUDGETS",
} as const;

/** What a child process needs to join its parent's turn. */
export interface ContextCarrier {
  sessionId: string;
  turnId: string;
  /** "" when the parent was at the top level of its turn. */
  callerId: string;
  sessionsRoot: string;
  traceparent: string;
  /** The program's ref ("" when the entry did not say). */
  program: string;
  /** The replay state as JSON ("" when the turn does not resume one). */
  replay: string;
  /** The turn approves every tool call. */
  approveTools: boolean;
  /** `{ budgets, limits }` as JSON ("" when the turn has neither). */
  budgets: string;
}

/**
 * The environment a child process needs to join the current session under the
 * current call: spread it into `spawn`'s `env` and any program in the child
 * that enters `sessionContext()` without an id joins this turn. Also sets a
 * W3C `TRACEPARENT`: the calling span when tracing is on (the child's spans
 * join the trace), else one derived from the turn and the calling node.
 * Returns {} outside a session context.
 */
export function contextCarrierEnv(): Record<string, string> {
  const context = activeContext();
  if (!context) return {};
  // Whatever the child records belongs to this turn, which must therefore be committed when it ends.
  context.turn.delegated = true;
  const callerId = callIdOf(context) ?? "";
  return {
    [CARRIER_VARIABLES.sessionId]: context.sessionId,
    [CARRIER_VARIABLES.turnId]: context.turn.turnId,
    [CARRIER_VARIABLES.callerId]: callerId,
    [CARRIER_VARIABLES.sessionsRoot]: context.db.root,
    [CARRIER_VARIABLES.traceparent]:
      traceparentOf(context.trace) ?? traceparentFor(context.sessionId, context.turn.turnId, callerId),
    // Always set, so a value this process inherited never leaks into its child.
    [CARRIER_VARIABLES.program]: context.turn.program?.ref ?? "",
    [CARRIER_VARIABLES.replay]: replayCarrierOf(context),
    [CARRIER_VARIABLES.approveTools]: context.approveTools === true ? "1" : "",
    [CARRIER_VARIABLES.budgets]: budgetsCarrierOf(context),
  };
}

/** What a context joining a turn of another process takes over from it. */
export interface RemoteTurn {
  program: TurnProgram | null;
  replay: Replay | null;
  approveTools: boolean;
  /** The turn's limits (not where they are kept: a shared ledger stays the parent's, the child counts its own calls). */
  budgets?: Budgets;
  limits?: LimitsConfig;
}

/** The turn's budgets (limits only) and the provider limits, for a child. */
function budgetsCarrierOf(context: ActiveContext): string {
  const budgets = context.budget?.budgets;
  const limits = context.limits?.config;
  if (!budgets && !limits) return "";
  const { ledger: _ledger, prices: _prices, ...own } = budgets ?? {};
  return JSON.stringify({ ...(budgets ? { budgets: own } : {}), ...(limits ? { limits } : {}) });
}

function carriedBudgets(text: string): { budgets?: Budgets; limits?: LimitsConfig } {
  if (!text) return {};
  try {
    return JSON.parse(text) as { budgets?: Budgets; limits?: LimitsConfig };
  } catch {
    throw new InvalidInputError(`${CARRIER_VARIABLES.budgets} is not valid JSON; start the child with runInChild().`);
  }
}

function replayCarrierOf(context: ActiveContext): string {
  const carried = context.turn.replay?.carrier(callIdOf(context));
  return carried ? JSON.stringify(carried) : "";
}

/**
 * What a context joining a turn of another process takes over from it: the
 * program's ref, whether it approves every tool call, and the replay when that
 * turn resumes an interrupted one.
 * Only from a carrier naming this very session and turn.
 */
export function remoteTurnOf(
  db: SessionDB,
  joined: { sessionId: string; turnId: string; callerId: string },
  carrier: ContextCarrier | null,
): RemoteTurn | null {
  const carried = carrier ?? readContextCarrier();
  if (!carried || carried.sessionId !== joined.sessionId || carried.turnId !== joined.turnId) return null;
  const program = carried.program ? { ref: carried.program } : null;
  const { approveTools } = carried;
  const spending = carriedBudgets(carried.budgets);
  if (!carried.replay) return { program, replay: null, approveTools, ...spending };
  let state: ReplayCarrier;
  try {
    state = JSON.parse(carried.replay) as ReplayCarrier;
  } catch {
    throw new InvalidInputError(`${CARRIER_VARIABLES.replay} is not valid JSON; start the child with runInChild().`);
  }
  const snapshot = storeInternals(db).snapshotSync(joined.sessionId);
  return {
    program,
    approveTools,
    ...spending,
    replay: Replay.fromCarrier(new RecordView(snapshot.byId, snapshot.ordered), state, joined.callerId),
  };
}

/** The carrier in `env`, or null when there is none; an invalid carried id is an error, not ignored. */
export function readContextCarrier(env: NodeJS.ProcessEnv = process.env): ContextCarrier | null {
  const sessionId = env[CARRIER_VARIABLES.sessionId];
  if (!sessionId) return null;
  assertValidSessionId(sessionId);
  const turnId = env[CARRIER_VARIABLES.turnId];
  const sessionsRoot = env[CARRIER_VARIABLES.sessionsRoot];
  return {
    sessionId,
    turnId: turnId && turnId !== "" ? turnId : "",
    callerId: env[CARRIER_VARIABLES.callerId] ?? "",
    sessionsRoot: sessionsRoot ?? "",
    traceparent: env[CARRIER_VARIABLES.traceparent] ?? "",
    program: env[CARRIER_VARIABLES.program] ?? "",
    replay: env[CARRIER_VARIABLES.replay] ?? "",
    approveTools: env[CARRIER_VARIABLES.approveTools] === "1",
    budgets: env[CARRIER_VARIABLES.budgets] ?? "",
  };
}

/** `00-<trace id from the turn>-<span id from the calling node>-01`. */
export function traceparentFor(sessionId: string, turnId: string, callId: string): string {
  const traceId = createHash("sha256").update(`${sessionId}\n${turnId}`).digest("hex").slice(0, 32);
  const spanSource = callId === "" ? `${turnId}:root` : callId;
  const spanId = /^[0-9a-f]{12}$/.test(spanSource)
    ? `0000${spanSource}`
    : createHash("sha256").update(spanSource).digest("hex").slice(0, 16);
  return `00-${traceId}-${spanId}-01`;
}
