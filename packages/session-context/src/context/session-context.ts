import { InvalidInputError, hasErrorCode, isCancellation } from "../errors.js";
import { TurnBudget } from "../budgets/turn-budget.js";
import { sharedProviderLimits, type LimitsConfig } from "../budgets/provider-limits.js";
import { assertValidSessionId, mintTurnId } from "../ids.js";
import { resolveRuntime } from "../runtime/resolve-runtime.js";
import { SessionNodeWriter } from "../store/node-writer.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { storeInternals } from "../store/internal.js";
import type { SessionStatus } from "../store/types.js";
import { checkTurnProgram } from "../turns/program-ref.js";
import { failSpan, parentContextOf, startTurnSpan } from "../telemetry/spans.js";
import { readContextCarrier, remoteTurnOf, type ContextCarrier } from "./carrier.js";
import { discardRefusedSession } from "./refused-turn.js";
import type { SessionEvent, SessionEventSink } from "./events.js";
import { activeContext, runWithContext } from "./storage.js";
import {
  CONTEXT_PROTOCOL,
  type ActiveContext,
  type SessionContextOptions,
  type SessionHandle,
  type TurnState,
} from "./types.js";

type SessionFn<T> = (session: SessionHandle) => Promise<T> | T;

const NEVER_ABORTED = new AbortController().signal;

/**
 * Installs the per-turn session context for `fn` and restores the previous one
 * when `fn` settles, also when it throws. The one place every entry point (CLI,
 * web, child process, research, tests) gets its session, turn, runtime and
 * asker from, so agentic functions behave the same everywhere.
 *
 * - `sessionId` given: that session continues (created under the id if new).
 * - no `sessionId`: a new session is created; its id is on the handle.
 * - the first write marks the session running; when `fn` settles the turn is
 *   committed (one git commit) and the status set to idle, or failed.
 */
export function sessionContext<T>(fn: SessionFn<T>): Promise<T>;
export function sessionContext<T>(options: SessionContextOptions, fn: SessionFn<T>): Promise<T>;
export async function sessionContext<T>(
  first: SessionContextOptions | SessionFn<T>,
  second?: SessionFn<T>,
): Promise<T> {
  const [options, fn] = typeof first === "function" ? [{}, first] : [first ?? {}, second];
  if (typeof fn !== "function") throw new InvalidInputError("sessionContext(options, fn): fn must be a function.");
  if (options.callerId !== undefined && typeof options.callerId !== "string") {
    throw new InvalidInputError('sessionContext: callerId must be a node id string ("" for the top level).');
  }
  const outer = activeContext();
  const carrier =
    options.sessionId === undefined && !outer && options.fromEnvironment !== false ? readContextCarrier() : null;
  const db = options.db ?? outer?.db ?? openStore(carrier?.sessionsRoot ? { root: carrier.sessionsRoot } : {});

  const { sessionId, created } = await openSession(db, options, carrier);
  const joinsOuter =
    outer !== undefined &&
    outer.sessionId === sessionId &&
    outer.db.root === db.root &&
    options.turnId === undefined &&
    options.callerId === undefined;
  const joinsRemote = options.callerId !== undefined || carrier !== null;
  const turnId = joinsOuter ? outer.turn.turnId : (options.turnId ?? (carrier?.turnId || mintTurnId()));
  const remote =
    joinsRemote && !joinsOuter
      ? remoteTurnOf(db, { sessionId, turnId, callerId: options.callerId ?? carrier?.callerId ?? "" }, carrier)
      : null;
  const turn: TurnState = joinsOuter
    ? outer.turn
    : {
        turnId,
        owner: !joinsRemote,
        began: joinsRemote,
        beginning: null,
        delegated: false,
        program: options.program !== undefined ? checkTurnProgram(options.program) : (remote?.program ?? null),
        recordedResumable: false,
        replay: remote?.replay ?? null,
      };
  const runtime = resolveRuntime(options);
  // A child resuming its part of a turn: what its record answers was never asked of the provider (skipCalls).
  if (remote?.replay && runtime) remote.replay.onModelCallsReused = (count) => runtime.provider.skipCalls?.(count);
  const onEvent = options.onEvent ?? outer?.onEvent ?? null;
  const emit = eventEmitter(onEvent);
  const setStatus = async (status: SessionStatus): Promise<void> => {
    await db.setStatus(sessionId, status);
    emit({ type: "status", sessionId, status });
  };
  const beginTurn = async (): Promise<void> => {
    if (turn.began || !turn.owner) return;
    turn.beginning ??= (async () => {
      await db.beginTurn(sessionId, turn.turnId);
      turn.began = true;
      emit({ type: "status", sessionId, status: "running" });
    })();
    await turn.beginning;
  };
  const writer = new SessionNodeWriter(db, sessionId, {
    beforeWrite: beginTurn,
    afterWrite: (op, node) => emit({ type: "node", sessionId, op, node }),
  });
  // A turn owned here is one trace under its own root span; a joined turn's spans hang under the caller's span.
  const traceParent = joinsOuter ? null : parentContextOf(options.traceparent ?? carrier?.traceparent);
  const turnSpan = traceParent && turn.owner ? startTurnSpan(traceParent, { sessionId, turnId: turn.turnId }) : null;
  const givenBudgets = joinsOuter ? undefined : (options.budgets ?? remote?.budgets);
  const ownBudget = givenBudgets
    ? new TurnBudget(givenBudgets, { db, sessionId, program: () => turn.program?.ref ?? null })
    : null;
  const context: ActiveContext = Object.freeze({
    protocol: CONTEXT_PROTOCOL,
    db,
    sessionId,
    writer,
    turn,
    runtime,
    call: joinsOuter ? outer.call : null,
    callerId: joinsOuter ? outer.callerId : (options.callerId ?? carrier?.callerId ?? null),
    source: options.source ?? outer?.source ?? (carrier ? "process" : "code"),
    asker: options.asker !== undefined ? options.asker : (outer?.asker ?? null),
    signal: combineSignals(options.signal, outer?.signal),
    onEvent,
    emit,
    beginTurn,
    setStatus,
    trace: joinsOuter ? outer.trace : (turnSpan?.context ?? traceParent ?? undefined),
    approveTools: options.approveTools ?? outer?.approveTools ?? remote?.approveTools ?? false,
    budget: ownBudget ?? outer?.budget ?? null,
    limits:
      (options.limits ?? remote?.limits)
        ? sharedProviderLimits((options.limits ?? remote?.limits) as LimitsConfig)
        : (outer?.limits ?? null),
  });
  const removal = { discarded: false };
  const handle: SessionHandle = Object.freeze({
    db,
    sessionId,
    runtime,
    turnId: turn.turnId,
    created,
    get discarded() {
      return removal.discarded;
    },
  });

  const endsTurn = !joinsOuter && turn.owner;
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await runWithContext(context, () => fn(handle)) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  // The turn's time after its last model call counts toward its program's day too (program wall-time budgets).
  await ownBudget?.close().catch((error: unknown) => {
    process.emitWarning(
      `Could not count turn ${turn.turnId}'s time to its program budget: ${(error as Error).message}`,
      {
        code: "OPENPROGRAM_BUDGET_TIME",
      },
    );
  });
  if (endsTurn && (turn.began || turn.delegated)) {
    const status: SessionStatus = outcome.ok || isCancellation(outcome.error) ? "idle" : "failed";
    try {
      // A turn a budget stopped says so in its commit (its calls record the error itself).
      const stoppedBy = !outcome.ok && hasErrorCode(outcome.error, "budget_exceeded") ? ", stopped by a budget" : "";
      const message = `turn ${turn.turnId} (${context.source})${stoppedBy}`;
      await db.endTurn(sessionId, turn.turnId, { status, message });
      emit({ type: "status", sessionId, status });
    } catch (endError) {
      if (outcome.ok) throw endError;
      process.emitWarning(`Could not end turn ${turn.turnId} of session ${sessionId}: ${(endError as Error).message}`, {
        code: "OPENPROGRAM_TURN_END",
      });
    }
  }
  if (turnSpan) {
    if (outcome.ok) turnSpan.span.end();
    else failSpan(turnSpan.span, outcome.error, { cancelled: isCancellation(outcome.error) });
  }
  if (!outcome.ok && created && endsTurn) removal.discarded = await discardRefusedSession(db, sessionId, outcome.error);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

async function openSession(
  db: SessionDB,
  options: SessionContextOptions,
  carrier: ContextCarrier | null,
): Promise<{ sessionId: string; created: boolean }> {
  const create = {
    agentId: options.agentId ?? "main",
    source: options.source ?? (carrier ? "process" : "code"),
    title: options.title ?? "",
    // A session made here is made for this turn: its repository and lease folder come with it.
    forTurn: true,
  };
  const requested = options.sessionId ?? carrier?.sessionId;
  if (requested !== undefined) {
    assertValidSessionId(requested);
    const created = await db.openSession(requested, create);
    // A turn a crashed process left holding the session is recovered before this one begins.
    if (!created && storeInternals(db).needsRecoveryCheck(requested)) await db.recover(requested);
    return { sessionId: requested, created };
  }
  const { id } = await db.createSession({ ...create, idPrefix: options.idPrefix ?? "session" });
  return { sessionId: id, created: true };
}

function eventEmitter(sink: SessionEventSink | null): (event: SessionEvent) => void {
  if (!sink) return () => undefined;
  return (event) => {
    try {
      sink(event);
    } catch (error) {
      process.emitWarning(`An onEvent sink threw on a ${event.type} event: ${(error as Error).message}`, {
        code: "OPENPROGRAM_EVENT_SINK",
      });
    }
  };
}

function combineSignals(own: AbortSignal | undefined, inherited: AbortSignal | undefined): AbortSignal {
  if (own && inherited && own !== inherited) return AbortSignal.any([own, inherited]);
  return own ?? inherited ?? NEVER_ABORTED;
}
