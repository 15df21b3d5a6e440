import type { DispatcherMetrics } from "./metrics.js";
import {
  chat,
  isCancellation,
  SessionBusyError,
  sessionContext,
  serializeError,
  toOpenProgramError,
  TurnSuspendedError,
  type Budgets,
  type Runtime,
  type SessionDB,
  type SessionEvent,
} from "@openprogram/session-context";
import type { LimitsConfig, ProviderLimits } from "@openprogram/session-context/budgets";
import { compactionRecord } from "@openprogram/session-context/compaction";
import { requireRuntime } from "@openprogram/session-context/runtime";
import { toolRecord, titleFromMessage, titleFromProgram } from "@openprogram/session-context/store";
import { resumeTurn, type PreparedResume } from "@openprogram/session-context/turns";
import { MAX_TURNS_PER_CONNECTION, type Client } from "./client.js";
import { ServerBusyError, ShuttingDownError, TooManyTurnsError } from "./errors.js";
import type { EventLogger } from "./logging.js";
import type { ProgramRegistry, RegisteredProgram } from "./programs.js";
import type { DeltaRelay } from "./delta-relay.js";
import type { ChatFrame, FrameError, RunFrame, SessionFrame, TurnDoneFrame, TurnFailedFrame } from "./protocol.js";
import type { Subscriptions } from "./subscriptions.js";
import type { WebAsker } from "./web-asker.js";
import type { Cluster } from "./cluster/cluster.js";
import { McpServerChoices } from "./mcp-servers.js";

/** What turns need from the dispatcher. */
export interface TurnDependencies {
  db: SessionDB;
  /** undefined: sessionContext creates the runtime from configuration. */
  runtime: Runtime | null | undefined;
  asker: WebAsker;
  subscriptions: Subscriptions;
  /** Streams replies' deltas to the session's clients. */
  deltas: DeltaRelay;
  programs: ProgramRegistry;
  log: EventLogger;
  /** Turns this dispatcher runs at once, across connections. */
  maxConcurrentTurns: number;
  metrics: DispatcherMetrics;
  /** In a cluster: a turn holds its session's lease in PostgreSQL, so one turn per session runs cluster-wide. */
  cluster: Cluster | null;
  /** Every turn's budgets (null: none). */
  budgets?: Budgets | null;
  /** Provider capacity every turn shares (null: none). */
  limits?: LimitsConfig | ProviderLimits | null;
  /** The MCP servers a chat turn may enable (absent: none). */
  mcp?: McpServerChoices;
}

interface RunningTurn {
  /** null until sessionContext has opened a new session. */
  sessionId: string | null;
  readonly controller: AbortController;
  done: Promise<void>;
  /** True while it holds the session's cluster lease. */
  leased: boolean;
}

/** What a turn runs: a chat, a registered program, or the continuation of a stopped turn. */
type TurnWork =
  | { kind: "chat"; text: string; from?: string; mcpServers?: string[] }
  | { kind: "run"; program: RegisteredProgram; input: unknown; approveTools: boolean }
  | { kind: "resume"; prepared: PreparedResume };

/** The turn a `resume` (or an answer to a question whose process is gone) continues. */
export interface ResumeRequest {
  sessionId: string;
  clientMsgId?: string | undefined;
  /**
   * The core's checks (prepareResume, routeAnswer), run once the session is
   * reserved here; null: nothing to run (the answer went to a live process).
   */
  prepare: () => Promise<PreparedResume | null>;
}

/** Cancelled turns get this long to record themselves and commit before shutdown gives up on them. */
const SETTLE_AFTER_CANCEL_MS = 15_000;

/**
 * Runs `chat` and `run` frames, one turn per session at a time. Each turn runs
 * inside `sessionContext({ sessionId, source: "web", asker, signal, onEvent,
 * fromEnvironment: false })` and nothing else: the core records, commits and
 * sets the status; this class only routes events to the session's clients.
 */
export class Turns {
  private readonly bySession = new Map<string, RunningTurn>();
  private readonly running = new Set<RunningTurn>();
  /** Sessions a delete_session is removing: no turn starts on them meanwhile. */
  private readonly deleting = new Set<string>();
  private closedBecause: string | null = null;

  constructor(private readonly deps: TurnDependencies) {}

  /** True while a turn of this session runs here. */
  isBusy(sessionId: string): boolean {
    return this.bySession.has(sessionId);
  }

  /**
   * Runs `remove` (the deletion of an idle session) while no turn may start
   * on the session in this dispatcher: checked and reserved before the first
   * await, so a `run` racing the deletion is refused with `session_busy`
   * instead of starting on a session that is then removed. Across processes
   * the core's session lock does the same.
   */
  async whileDeleting<T>(sessionId: string, remove: () => Promise<T>): Promise<T> {
    if (this.bySession.has(sessionId) || this.deleting.has(sessionId)) throw new SessionBusyError(sessionId);
    this.deleting.add(sessionId);
    const { cluster } = this.deps;
    try {
      // Across replicas too: the deletion holds the session's lease, so no turn starts anywhere meanwhile.
      if (cluster) await cluster.leases.acquire(sessionId, () => undefined);
      try {
        return await remove();
      } finally {
        if (cluster) await cluster.leases.release(sessionId);
      }
    } finally {
      this.deleting.delete(sessionId);
    }
  }

  /** Number of turns running. */
  get count(): number {
    return this.running.size;
  }

  /** False once shutdown began. */
  get accepting(): boolean {
    return this.closedBecause === null;
  }

  /**
   * Starts a turn, or throws (ShuttingDownError, SessionBusyError,
   * TooManyTurnsError, ServerBusyError, UnknownProgramError,
   * InvalidInputError, RuntimeMissingError, ProviderConfigError) before
   * anything is written.
   */
  start(client: Client, frame: ChatFrame | RunFrame): void {
    this.admit(client, frame.session_id);
    let work: TurnWork;
    if (frame.type === "run") {
      const program = this.deps.programs.get(frame.program);
      program.checkInput(frame.input);
      work = { kind: "run", program, input: frame.input, approveTools: frame.approve_tools === true };
    } else {
      // What sessionContext will pick for the turn (a broken configuration throws here, before anything is written).
      requireRuntime("the dispatcher runs without a model, so chat cannot answer", { runtime: this.deps.runtime });
      work = {
        kind: "chat",
        text: frame.text,
        ...(frame.from !== undefined ? { from: frame.from } : {}),
        ...(frame.mcp_servers?.length ? { mcpServers: frame.mcp_servers } : {}),
      };
    }
    const turn = this.reserve(client, frame.session_id ?? null);
    turn.done = this.execute(client, work, frame.client_msg_id, turn).finally(() => this.release(client, turn));
  }

  /**
   * Continues a stopped turn of the session here, through the core's
   * prepareResume and resumeTurn. Resolves once the turn is under way; throws
   * (the checks of `start`, then the core's SessionNotFoundError,
   * NothingToResumeError, TurnNotFoundError, TurnNotResumableError,
   * NoPendingQuestionError, InvalidAnswerError, SessionBusyError) before
   * anything runs. The session is reserved first, so of two resumes of one
   * session here one wins and the other gets `session_busy`; across
   * processes the core's claim on the turn does the same.
   */
  async resume(client: Client, request: ResumeRequest): Promise<void> {
    const { sessionId } = request;
    this.admit(client, sessionId);
    const turn = this.reserve(client, sessionId);
    let prepared: PreparedResume | null;
    try {
      // Leased before the core's checks: its recovery of a dead replica's turn then runs here alone.
      await this.lease(turn, sessionId);
      prepared = await request.prepare();
    } catch (error) {
      this.release(client, turn);
      throw error;
    }
    if (prepared === null) {
      this.release(client, turn);
      return;
    }
    turn.done = this.execute(client, { kind: "resume", prepared }, request.clientMsgId, turn).finally(() =>
      this.release(client, turn),
    );
  }

  /** The checks every new turn passes before anything is reserved or written. */
  private admit(client: Client, sessionId: string | undefined): void {
    if (this.closedBecause !== null) throw new ShuttingDownError(this.closedBecause);
    if (sessionId !== undefined && this.bySession.has(sessionId)) throw new SessionBusyError(sessionId);
    if (sessionId !== undefined && this.deleting.has(sessionId))
      throw new SessionBusyError(
        sessionId,
        "it is being deleted; start the turn without session_id, or with another id",
      );
    if (client.runningTurns >= MAX_TURNS_PER_CONNECTION) throw new TooManyTurnsError(MAX_TURNS_PER_CONNECTION);
    if (this.running.size >= this.deps.maxConcurrentTurns) throw new ServerBusyError(this.deps.maxConcurrentTurns);
  }

  /** Counts the turn in (synchronously, so a racing frame sees it). */
  private reserve(client: Client, sessionId: string | null): RunningTurn {
    const turn: RunningTurn = {
      sessionId,
      controller: new AbortController(),
      done: Promise.resolve(),
      leased: false,
    };
    if (sessionId !== null) this.bySession.set(sessionId, turn);
    this.running.add(turn);
    client.runningTurns++;
    return turn;
  }

  /**
   * Takes the session's cluster lease for the turn (SessionBusyError when a
   * turn of it runs on another replica); a lease lost later aborts the turn.
   */
  private async lease(turn: RunningTurn, sessionId: string): Promise<void> {
    const { cluster } = this.deps;
    if (!cluster || turn.leased) return;
    await cluster.leases.acquire(sessionId, (error) => {
      turn.leased = false;
      this.deps.log.warn("lease_lost", { session_id: sessionId, message: error.message });
      turn.controller.abort(error);
    });
    turn.leased = true;
  }

  /** Gives the session's cluster lease back (once the core has committed the turn). */
  private async unlease(turn: RunningTurn): Promise<void> {
    if (!turn.leased || turn.sessionId === null) return;
    turn.leased = false;
    // index.json is a coalesced cache (written up to a second later): in a cluster the turn's end is written
    // before the lease goes, so every replica lists the session as it is once the turn is over. Only this
    // session's change is waited for, in one write shared with the turns ending meanwhile (waiting for the whole
    // queue made each turn end write index.json again for the other sessions' running turns). A failed write
    // stays queued and is tried again; it must not keep the lease.
    await this.deps.db.flushRegistry(turn.sessionId).catch(() => undefined);
    await this.deps.cluster?.leases.release(turn.sessionId);
  }

  private release(client: Client, turn: RunningTurn): void {
    void this.unlease(turn);
    // A reply whose final write failed leaves its stream open: close it.
    if (turn.sessionId !== null) this.deps.deltas.endSession(turn.sessionId);
    client.runningTurns--;
    this.running.delete(turn);
    if (turn.sessionId !== null && this.bySession.get(turn.sessionId) === turn) this.bySession.delete(turn.sessionId);
  }

  /** Cancels the session's running turn through its signal. */
  stop(sessionId: string, reason: string): boolean {
    const turn = this.bySession.get(sessionId);
    if (!turn) return false;
    turn.controller.abort(reason);
    return true;
  }

  /**
   * Shutdown: refuses new turns, waits up to `graceMs` for running ones, then
   * cancels the rest and waits for them to record the cancellation and commit.
   */
  async drain(reason: string, graceMs: number): Promise<{ cancelled: number; abandoned: number }> {
    this.closedBecause ??= reason;
    if (this.running.size === 0) return { cancelled: 0, abandoned: 0 };
    // Suspended, not cancelled: a question stays waiting on disk, and answering it after the restart resumes the
    // turn. A turn waiting for a human is suspended at once; the grace period is for work that can finish.
    const suspension = new TurnSuspendedError(`the dispatcher is shutting down (${reason})`);
    let suspendedAtOnce = 0;
    for (const turn of this.running) {
      if (turn.sessionId !== null && this.deps.asker.pendingFor(turn.sessionId).length > 0) {
        turn.controller.abort(suspension);
        suspendedAtOnce++;
      }
    }
    if (suspendedAtOnce > 0)
      this.deps.log.info("turns_suspended", {
        count: suspendedAtOnce,
        reason,
        hint: "their questions stay waiting on disk; answering one after the restart continues its turn",
      });
    if (await this.settledWithin(graceMs)) return { cancelled: suspendedAtOnce, abandoned: 0 };
    let cancelled = suspendedAtOnce;
    for (const turn of this.running) {
      if (turn.controller.signal.aborted) continue;
      turn.controller.abort(suspension);
      cancelled++;
    }
    this.deps.log.warn("turns_cancelled", { count: cancelled, reason });
    if (await this.settledWithin(SETTLE_AFTER_CANCEL_MS)) return { cancelled, abandoned: 0 };
    const abandoned = this.running.size;
    this.deps.log.error("turns_abandoned", {
      count: abandoned,
      session_ids: [...this.running].map((turn) => turn.sessionId),
      hint: "a program ignored its cancellation signal; the core marks its unfinished nodes interrupted when the session is next opened for a turn",
    });
    return { cancelled, abandoned };
  }

  private async execute(
    client: Client,
    work: TurnWork,
    clientMsgId: string | undefined,
    turn: RunningTurn,
  ): Promise<void> {
    const { subscriptions, log } = this.deps;
    const started = performance.now();
    const { kind } = work;
    const resumed = work.kind === "resume" ? work.prepared.turn : null;
    const labels = {
      kind,
      ...(work.kind === "run" ? { program: work.program.info.name } : {}),
      ...(resumed ? { resumed_turn_id: resumed.turnId } : {}),
    };
    const echo = clientMsgId !== undefined ? { client_msg_id: clientMsgId } : {};
    const metricLabels = { source: "web", program: work.kind === "run" ? work.program.info.name : work.kind };
    this.deps.metrics.turnStarted(metricLabels);
    const opened: { turn?: { sessionId: string; turnId: string } } = {};
    // What the turn records to be resumable: the program's ref and input (a run without input records {}).
    const program =
      work.kind === "run"
        ? { ref: work.program.ref, input: work.input ?? {} }
        : work.kind === "resume"
          ? work.prepared.recordedProgram
          : null;
    try {
      // The input schema's refusal, before any session is opened (an error frame, nothing created).
      if (work.kind === "run") await work.program.validateInput(work.input);
      // The enabled MCP servers' tools, before any session is opened: a server that is not offered, or cannot
      // start, is an error frame naming it (and its stderr), nothing written.
      const tools =
        work.kind === "chat" && work.mcpServers
          ? await (this.deps.mcp ?? new McpServerChoices()).toolsFor(work.mcpServers)
          : [];
      // A turn on an existing session takes the cluster lease before the core opens it: a refusal writes nothing.
      if (turn.sessionId !== null) await this.lease(turn, turn.sessionId);
      const result = await sessionContext(
        {
          sessionId: turn.sessionId ?? undefined,
          source: "web",
          // Applies only when this turn creates the session: later turns never retitle it.
          ...titleOf(work),
          ...(program ? { program } : {}),
          asker: this.deps.asker,
          // The page's "approve every tool call" setting, for this turn only.
          ...(work.kind === "run" && work.approveTools ? { approveTools: true } : {}),
          signal: turn.controller.signal,
          onEvent: this.onEvent,
          fromEnvironment: false,
          ...(client.traceparent ? { traceparent: client.traceparent } : {}),
          db: this.deps.db,
          ...(this.deps.runtime !== undefined ? { runtime: this.deps.runtime } : {}),
          ...(this.deps.budgets ? { budgets: this.deps.budgets } : {}),
          ...(this.deps.limits ? { limits: this.deps.limits } : {}),
        },
        async (session) => {
          // A new session's id is known only now (no other replica can know it yet).
          await this.lease(turn, session.sessionId);
          opened.turn = { sessionId: session.sessionId, turnId: session.turnId };
          if (turn.sessionId === null) {
            turn.sessionId = session.sessionId;
            this.bySession.set(session.sessionId, turn);
          }
          subscriptions.subscribe(client, session.sessionId);
          this.publishToTurn(client, {
            type: "session",
            session_id: session.sessionId,
            created: session.created,
            turn_id: session.turnId,
            kind,
            ...(resumed ? { resumed_turn_id: resumed.turnId } : {}),
            ...echo,
          });
          log.info("turn_start", {
            client: client.id,
            session_id: session.sessionId,
            turn_id: session.turnId,
            created: session.created,
            ...labels,
          });
          if (work.kind === "chat")
            return chat(work.text, {
              ...(work.from !== undefined ? { from: work.from } : {}),
              ...(tools.length > 0 ? { tools } : {}),
            });
          if (work.kind === "run") return work.program.invoke(work.input);
          return resumeTurn(work.prepared);
        },
      );
      const { sessionId, turnId } = opened.turn as { sessionId: string; turnId: string };
      // The turn is committed: the lease goes before the turn's end is told, so a client may start the next at once.
      await this.unlease(turn);
      this.publishToTurn(client, { type: "turn_done", session_id: sessionId, turn_id: turnId, result, ...echo });
      log.info("turn_end", {
        session_id: sessionId,
        turn_id: turnId,
        ...labels,
        outcome: "done",
        duration_ms: elapsed(started),
      });
      this.deps.metrics.turnEnded(metricLabels, "done", elapsed(started) / 1000);
    } catch (caught) {
      await this.unlease(turn);
      if (opened.turn === undefined) {
        const error = toOpenProgramError(caught);
        // The session could not even be opened (e.g. an unwritable store): nothing ran, so no turn frames.
        client.send({
          type: "error",
          code: error.code,
          message: error.message,
          action: kind,
          ...(clientMsgId !== undefined ? { ref: clientMsgId } : {}),
        });
        log.error("turn_rejected", { client: client.id, ...labels, error_code: error.code });
        this.deps.metrics.turnEnded(metricLabels, "failed", elapsed(started) / 1000);
        return;
      }
      // The failure as the node records it and every entry reports it: a program's own TypeError is
      // { code: "error", name: "TypeError" } here as on the command line, not the server's internal_error.
      const { code, name, message } = serializeError(caught);
      const failure: FrameError = { code, name, message };
      const { sessionId, turnId } = opened.turn;
      this.publishToTurn(client, {
        type: "turn_failed",
        session_id: sessionId,
        turn_id: turnId,
        error: failure,
        ...echo,
      });
      const outcome = isCancellation(caught) ? "cancelled" : "failed";
      this.deps.metrics.turnEnded(metricLabels, outcome, elapsed(started) / 1000);
      const fields = {
        session_id: sessionId,
        turn_id: turnId,
        ...labels,
        outcome,
        error_code: failure.code,
        duration_ms: elapsed(started),
      };
      if (outcome === "cancelled") log.info("turn_end", fields);
      else log.warn("turn_end", fields);
    }
  }

  /**
   * A frame that opens or ends a turn goes to the session's clients, and
   * always to the client that started the turn, even if it unsubscribed (or
   * the session was dropped) meanwhile: every turn it started ends, for it,
   * with `turn_done` or `turn_failed`.
   */
  private publishToTurn(client: Client, frame: SessionFrame | TurnDoneFrame | TurnFailedFrame): void {
    const { subscriptions } = this.deps;
    subscriptions.publish(frame.session_id, frame);
    if (!subscriptions.isSubscribed(client, frame.session_id)) client.send(frame);
  }

  /** Maps the core's events to frames for the session's clients. */
  private readonly onEvent = (event: SessionEvent): void => {
    const { subscriptions } = this.deps;
    this.deps.metrics.observe(event);
    switch (event.type) {
      case "node":
        // A reply's last deltas go out before the node frame that ends it.
        if (event.node.role === "llm" && event.op === "update") this.deps.deltas.end(event.sessionId, event.node.id);
        subscriptions.publish(event.sessionId, {
          type: "node",
          session_id: event.sessionId,
          op: event.op,
          node: event.node,
        });
        return;
      case "status":
        subscriptions.publish(event.sessionId, { type: "status", session_id: event.sessionId, status: event.status });
        return;
      case "question_closed":
        subscriptions.publish(event.sessionId, {
          type: "question_closed",
          session_id: event.sessionId,
          question_id: event.questionId,
          outcome: event.outcome,
        });
        return;
      case "question":
        // The WebAsker sends the question frame itself: it is the one that can be answered.
        return;
      case "delta":
        this.deps.deltas.add(event.sessionId, event.nodeId, event.text);
        return;
      case "compaction":
        subscriptions.publish(event.sessionId, compactionRecord(event));
        return;
      case "tool_call":
      case "tool_result":
        subscriptions.publish(event.sessionId, toolRecord(event));
        return;
      case "retry":
        subscriptions.publish(event.sessionId, {
          type: "retry",
          session_id: event.sessionId,
          node_id: event.nodeId,
          attempt: event.attempt,
          delay_ms: event.delayMs,
          reason: event.reason,
        });
        return;
    }
  };

  /** The runtime turns use (undefined: from configuration), for work beside turns (a `compact` frame). */
  get runtime(): Runtime | null | undefined {
    return this.deps.runtime;
  }

  private async settledWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const all = Promise.allSettled([...this.running].map((turn) => turn.done)).then(() => true as const);
    try {
      return await Promise.race([all, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}

/** The title of a session the turn creates: its first message, or the program's call. */
function titleOf(work: TurnWork): { title?: string } {
  if (work.kind === "chat") return { title: titleFromMessage(work.text) };
  if (work.kind === "run") return { title: titleFromProgram(work.program.info.name, work.input ?? {}) };
  return {};
}
