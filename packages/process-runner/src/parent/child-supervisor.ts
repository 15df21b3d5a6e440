import { fork, type ChildProcess } from "node:child_process";
import {
  currentAsker,
  currentRuntime,
  currentSession,
  currentSignal,
  isSuspension,
  type SessionNode,
} from "@openprogram/session-context";
import {
  beginCurrentTurn,
  contextCarrierEnv,
  recordAbandonedNodes,
  relaySessionEvent,
} from "@openprogram/session-context/relay";
import type { ChildExit } from "../errors.js";
import { isChildMessage, tag, type ChildMessage, type ParentMessage } from "../protocol.js";
import { childEntryPath } from "./child-entry-path.js";
import type { LaunchPlan } from "./launch-plan.js";
import { MessageQueue } from "./message-queue.js";
import { childEnvironment, ModelCallRelay } from "./model-relay.js";
import { signalGroup } from "./process-group.js";
import { QuestionRelay } from "./question-relay.js";
import { settleRun, type ReportedOutcome, type StopRequest } from "./settle-run.js";

/** After the child exits, how long to wait for its IPC channel to close (a process that left the group may hold it). */
const CHANNEL_CLOSE_WAIT_MS = 1000;

type Happening =
  | { kind: "message"; message: ChildMessage }
  | { kind: "spawn_error"; error: Error }
  | { kind: "exit"; exit: ChildExit }
  | { kind: "closed" };

/**
 * Starts the child and follows it to the end, inside the caller's session
 * context: relays its events and questions, stops it on request, timeout or
 * the parent's cancellation, kills its process group, and records what it
 * left unfinished. Must be constructed inside a session context.
 */
export class ChildSupervisor<T> {
  /** The child's pid (its process group id), undefined if it could not start. */
  readonly pid: number | undefined;
  /** The function's result or error. */
  readonly result: Promise<T>;
  /** Resolves when the child and its group are gone and its nodes are recorded. */
  readonly finished: Promise<void>;

  private readonly child: ChildProcess;
  private readonly happenings = new MessageQueue<Happening>();
  private readonly relay: QuestionRelay;
  private readonly models: ModelCallRelay | null;
  private readonly parentSignal: AbortSignal;
  private readonly appendedNodeIds: string[] = [];
  private outcome: ReportedOutcome | null = null;
  private stopRequest: StopRequest | null = null;
  private exited = false;
  private killedByUs = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly plan: LaunchPlan) {
    this.parentSignal = currentSignal();
    const asker = currentAsker();
    this.relay = new QuestionRelay(asker, (message) => this.send(message));
    this.models = ModelCallRelay.for(currentRuntime(), (message) => this.send(message));
    this.child = fork(childEntryPath(), [], {
      cwd: plan.cwd,
      env: childEnvironment({ ...process.env, ...plan.env, ...contextCarrierEnv() }, this.models !== null),
      // No loader flags: the core loads natively; tsx, if needed, is registered afterwards.
      execArgv: [],
      // Output goes where the parent's goes, as it would in-process.
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      // Its own process group, so that one signal reaches every process it starts.
      detached: true,
      serialization: "json",
    });
    this.pid = this.child.pid;
    this.child.on("message", (message: unknown) => {
      if (isChildMessage(message)) this.happenings.push({ kind: "message", message });
    });
    this.child.on("error", (error) => {
      if (this.pid === undefined) this.happenings.push({ kind: "spawn_error", error });
    });
    this.child.on("exit", (code, signal) => this.happenings.push({ kind: "exit", exit: { code, signal } }));
    this.child.on("close", () => this.happenings.push({ kind: "closed" }));
    const start: ParentMessage = {
      type: "start",
      moduleUrl: plan.moduleUrl,
      exportName: plan.exportName,
      input: plan.input,
      typeScriptLoader: plan.typeScriptLoader,
      hasAsker: asker !== null,
      graceMs: plan.graceMs,
      modelRelay: this.models?.start ?? null,
    };
    // The turn begins (status running, lease taken) before the child writes anything, so a child that asks the
    // user or runs long is never mistaken for a crashed turn, and the turn's commit includes its nodes.
    void beginCurrentTurn().then(
      () => this.send(start),
      (error: unknown) => this.requestStop({ kind: "failure", reason: "the turn could not begin", error }),
    );

    this.parentSignal.addEventListener("abort", this.onParentAbort, { once: true });
    if (plan.timeoutMs !== null) {
      const timeoutMs = plan.timeoutMs;
      this.timers.push(
        setTimeout(
          () => this.requestStop({ kind: "timeout", reason: `timed out after ${timeoutMs} ms`, timeoutMs }),
          timeoutMs,
        ),
      );
    }
    this.result = this.follow() as Promise<T>;
    this.finished = this.result.then(
      () => undefined,
      () => undefined,
    );
  }

  /** Graceful stop, then SIGKILL of the group after graceMs; resolves when all is gone. */
  stop(reason: string): Promise<void> {
    this.requestStop({ kind: "stop", reason });
    return this.finished;
  }

  private readonly onParentAbort = (): void => {
    const reason = this.parentSignal.reason as unknown;
    this.requestStop({
      kind: "stop",
      reason:
        reason instanceof Error
          ? reason.message
          : typeof reason === "string"
            ? reason
            : "the parent's turn was cancelled",
      // A suspended turn (the server stops) suspends the child too: its waiting question stays on disk.
      suspend: isSuspension(reason),
    });
  };

  private requestStop(request: StopRequest): void {
    if (this.exited || this.stopRequest || this.pid === undefined) return;
    this.stopRequest = request;
    this.send({
      type: "abort",
      reason: request.reason,
      ...(request.kind === "stop" && request.suspend === true ? { suspend: true } : {}),
    });
    this.timers.push(setTimeout(() => this.kill(), this.plan.graceMs));
  }

  private kill(): void {
    if (this.exited || this.pid === undefined) return;
    this.killedByUs = true;
    signalGroup(this.pid, "SIGKILL");
  }

  private send(message: ParentMessage): void {
    if (!this.child.connected) return;
    // A failed send means the child is gone; its exit is handled by follow().
    this.child.send(tag(message), (error: Error | null) => void error);
  }

  /** The loop: everything the child does, in order, in the caller's context. */
  private async follow(): Promise<unknown> {
    let exit: ChildExit | null = null;
    let spawnError: Error | null = null;
    for (;;) {
      const happening = await this.happenings.next();
      if (happening.kind === "message") {
        this.handle(happening.message);
      } else if (happening.kind === "spawn_error") {
        spawnError = happening.error;
        break;
      } else if (happening.kind === "exit") {
        exit = happening.exit;
        this.exited = true;
        // No orphan survives the run: whatever the child started and left behind goes with it.
        if (this.pid !== undefined) signalGroup(this.pid, "SIGKILL");
        this.timers.push(setTimeout(() => this.happenings.push({ kind: "closed" }), CHANNEL_CLOSE_WAIT_MS));
      } else {
        break;
      }
    }
    for (const timer of this.timers) clearTimeout(timer);
    this.parentSignal.removeEventListener("abort", this.onParentAbort);
    this.relay.cancelAll("the child process ended");
    this.models?.cancelAll("the child process ended");
    await this.recordAbandoned(exit);
    const settled = settleRun({
      label: this.plan.label,
      pid: this.pid,
      outcome: this.outcome,
      stop: this.stopRequest,
      exit,
      spawnError,
    });
    if (!settled.ok) throw settled.error;
    return settled.value;
  }

  private handle(message: ChildMessage): void {
    try {
      switch (message.type) {
        case "event":
          if (message.event.type === "node" && message.event.op === "append")
            this.appendedNodeIds.push(message.event.node.id);
          relaySessionEvent(message.event);
          return;
        case "ask":
          this.relay.ask(message.request);
          return;
        case "ask_cancel":
          this.relay.cancel(message.questionId, "the child stopped waiting");
          return;
        case "model_call":
          if (this.models) this.models.call(message);
          else this.send({ type: "model_end", callId: message.callId, error: NO_RELAY });
          return;
        case "model_cancel":
          this.models?.cancel(message.callId, message.reason);
          return;
        case "model_skip":
          this.models?.skip(message.count);
          return;
        case "result":
          this.outcome = { kind: "result", value: message.value };
          return;
        case "error":
          this.outcome = { kind: "error", error: message.error };
          return;
        case "load_error":
          this.outcome = { kind: "load_error", failure: message.kind, message: message.message };
          return;
        case "unsendable_result":
          this.outcome = { kind: "unsendable_result", message: message.message };
          return;
      }
    } catch (error) {
      this.requestStop({
        kind: "failure",
        reason: `the parent could not handle the child's ${message.type} message`,
        error,
      });
    }
  }

  /**
   * Nodes the child left running: `killed` when it died by a signal (ours
   * after the grace period, or anyone's), `interrupted` when it exited
   * without reporting. Nested nodes whose append event was lost in the kill
   * are found through their callers.
   */
  private async recordAbandoned(exit: ChildExit | null): Promise<void> {
    const killed = this.killedByUs || Boolean(exit?.signal);
    if ((!killed && this.outcome !== null) || this.appendedNodeIds.length === 0) return;
    try {
      const ids = withDescendants(await currentSession().writer.load(), this.appendedNodeIds);
      await recordAbandonedNodes(ids, killed ? "killed" : "interrupted");
    } catch (error) {
      // The run's own outcome is what the caller needs; the store's trouble is reported beside it.
      process.emitWarning(
        `Could not record the nodes ${this.plan.label} left unfinished: ${(error as Error).message}`,
        { code: "OPENPROGRAM_ABANDONED_NODES" },
      );
    }
  }
}

const NO_RELAY = {
  name: "InternalError",
  code: "internal_error",
  message: "The child relayed a model call, but the parent's runtime neither records nor replays.",
};

function withDescendants(nodes: readonly SessionNode[], roots: readonly string[]): string[] {
  const ids = new Set(roots);
  if (ids.size === 0) return [];
  // Nodes are in seq order and a callee is appended after its caller, so one pass suffices.
  for (const node of nodes) if (node.caller !== "" && ids.has(node.caller)) ids.add(node.id);
  return [...ids];
}
