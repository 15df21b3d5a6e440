import { canonicalJson } from "../json/canonical.js";
import { toRecordable } from "../json/recordable.js";
import type { SessionNode } from "../store/types.js";
import { type RecordView, resumesLink } from "./record-view.js";

/** Where a live call's node goes in its caller's list of calls, once it is written. */
export interface ReplaySlot {
  fill(nodeId: string): void;
}

/** What replay decided for one agentic call. */
export type CallStep =
  /** Return (or throw) the recorded outcome of `node` without running the call. */
  | { kind: "reuse"; node: SessionNode }
  /** Run the call again as a new node that continues `node` (its finished calls are reused). */
  | { kind: "continue"; node: SessionNode; nodeId: string | undefined; slot: ReplaySlot }
  | { kind: "live"; slot: ReplaySlot | null };

/** What replay decided for one model request of `runtime.exec` (a tool loop makes several). */
export type ExecStep = { kind: "reuse"; output: string; node: SessionNode } | { kind: "live"; slot: ReplaySlot | null };

/** What replay decided for one `askUser`. */
export type AskStep =
  | { kind: "reuse"; node: SessionNode }
  /** The recorded question still waits: ask it again on the same node. */
  | { kind: "continue"; node: SessionNode }
  | { kind: "live"; slot: ReplaySlot | null };

/** What a child process needs to carry on replaying under the call that started it. */
export interface ReplayCarrier {
  /** The turn being resumed. */
  turn: string;
  ordinals: Record<string, number>;
  diverged: boolean;
  /** Recorded top-level call id -> the id its continuation must use. */
  continued: Record<string, string>;
}

const LIVE: { kind: "live"; slot: null } = Object.freeze({ kind: "live", slot: null });

/** The calls under one caller that replay matches against, and how far it got. */
class ReplayFrame {
  /** Recorded calls by kind and name, each list in program order. */
  private readonly candidates = new Map<string, SessionNode[]>();
  private readonly ordinals = new Map<string, number>();
  /** Set at the first call that matched nothing: the caller's later calls run live. */
  diverged = false;
  /** This caller's calls in program order (reused recorded ids and live ids; null until written). */
  readonly calls: Array<string | null> = [];

  constructor(recorded: readonly SessionNode[], seed?: ReplayCarrier) {
    for (const node of recorded) {
      const key = keyOf(node);
      if (key === null) continue;
      let list = this.candidates.get(key);
      if (!list) this.candidates.set(key, (list = []));
      list.push(node);
    }
    if (seed) {
      for (const [key, value] of Object.entries(seed.ordinals)) this.ordinals.set(key, value);
      this.diverged = seed.diverged;
    }
  }

  /** The recorded call at the next position of this kind, or null (and the frame diverges). */
  next(key: string): SessionNode | null {
    const ordinal = this.ordinals.get(key) ?? 0;
    this.ordinals.set(key, ordinal + 1);
    if (this.diverged) return null;
    const candidate = this.candidates.get(key)?.[ordinal] ?? null;
    if (candidate === null) this.diverged = true;
    return candidate;
  }

  /** The candidate `next(key)` would give, without taking it. */
  peek(key: string): SessionNode | null {
    return this.diverged ? null : (this.candidates.get(key)?.[this.ordinals.get(key) ?? 0] ?? null);
  }

  reuse(nodeId: string): void {
    this.calls.push(nodeId);
  }

  /** The latest recorded execution of a tool call (a resumed one's continuation wins), or null. */
  byToolCallId(toolCallId: string): SessionNode | null {
    let found: SessionNode | null = null;
    for (const list of this.candidates.values())
      for (const node of list) if (node.metadata.tool_call_id === toolCallId) found = node;
    return found;
  }

  slot(): ReplaySlot {
    const index = this.calls.push(null) - 1;
    return { fill: (nodeId) => void (this.calls[index] = nodeId) };
  }

  carrier(turn: string, continued: Record<string, string>): ReplayCarrier {
    return { turn, ordinals: Object.fromEntries(this.ordinals), diverged: this.diverged, continued };
  }
}

/**
 * The record an interrupted turn left, as a resumed turn replays it. Every
 * agentic call, exec and askUser of the re-run asks it first: the call at the
 * same position (the caller, the kind and name, the ordinal among the caller's
 * calls of that name) with the same input gives its recorded outcome; a call
 * the record has no match for runs live, and so do its caller's later calls.
 */
export class Replay {
  private readonly frames = new Map<string, ReplayFrame>();
  private readonly root: ReplayFrame;
  private readonly continued: Map<string, string>;
  /**
   * Told how many model requests each reuse answered from the record (an
   * exec's one, or every llm node under a reused call): a replayed recording
   * moves past them (`ModelProvider.skipCalls`).
   */
  onModelCallsReused: ((count: number) => void) | null = null;

  /**
   * @param record the session's nodes when the resume began
   * @param turnId the turn being resumed
   * @param continued recorded top-level call id -> the id its continuation is written under
   * @param callerId the node this process's top-level calls hang under ("" at the top of the turn)
   */
  constructor(
    private readonly record: RecordView,
    readonly turnId: string,
    continued: ReadonlyMap<string, string>,
    callerId = "",
    seed?: ReplayCarrier,
  ) {
    this.continued = new Map(continued);
    const recordedCaller = callerId === "" ? null : resumesLink(record.byId.get(callerId))?.node_id;
    const top =
      callerId === ""
        ? record.topLevelOf(turnId)
        : recordedCaller !== undefined && recordedCaller !== null
          ? record.logicalChildren(recordedCaller)
          : [];
    this.root = new ReplayFrame(top, seed);
    this.frames.set(callerId, this.root);
  }

  /** Rebuilds the replay a parent process handed to a child (see `carrier`). */
  static fromCarrier(record: RecordView, carrier: ReplayCarrier, callerId: string): Replay {
    return new Replay(record, carrier.turn, new Map(Object.entries(carrier.continued)), callerId, carrier);
  }

  /** An agentic call named `name` with `input`, made under `callerId` (null: the top level). */
  enterCall(callerId: string | null, name: string, input: unknown): CallStep {
    const frame = this.frameOf(callerId);
    if (!frame) return LIVE;
    const candidate = frame.next(`code:${name}`);
    if (candidate === null) return { kind: "live", slot: frame.slot() };
    if (canonicalJson(toRecordable(input ?? {})) !== canonicalJson(candidate.input)) {
      frame.diverged = true;
      return { kind: "live", slot: frame.slot() };
    }
    if (this.record.isReusable(candidate)) {
      frame.reuse(candidate.id);
      this.reusedModelCalls(this.record.modelCallsUnder(candidate.id));
      return { kind: "reuse", node: candidate };
    }
    return { kind: "continue", node: candidate, nodeId: this.continued.get(candidate.id), slot: frame.slot() };
  }

  /** The continuation of `recorded` was written as `nodeId`: its own calls replay against the recorded ones. */
  openFrame(nodeId: string, recorded: SessionNode): void {
    this.frames.set(nodeId, new ReplayFrame(this.record.logicalChildren(recorded.id)));
  }

  /** An exec under `callerId`; `bodyDigest` gives the SHA-256 of the request it would send (null: unknown). */
  /** The recorded llm node the next exec under `callerId` would be matched against, or null (nothing taken). */
  peekExec(callerId: string | null): SessionNode | null {
    return this.frameOf(callerId)?.peek("llm") ?? null;
  }

  enterExec(callerId: string | null, bodyDigest: () => string | null): ExecStep {
    const frame = this.frameOf(callerId);
    if (!frame) return LIVE;
    const candidate = frame.next("llm");
    if (candidate === null) return { kind: "live", slot: frame.slot() };
    const digest = bodyDigest();
    if (digest === null || candidate.metadata.prompt_sha256 !== digest) {
      frame.diverged = true;
      return { kind: "live", slot: frame.slot() };
    }
    if (!this.record.isReusable(candidate)) return { kind: "live", slot: frame.slot() };
    frame.reuse(candidate.id);
    this.reusedModelCalls(1);
    // The tools a reused reply asked for replay against what they recorded under it.
    if (Array.isArray(candidate.metadata.tool_calls)) this.openFrame(candidate.id, candidate);
    return { kind: "reuse", output: candidate.output as string, node: candidate };
  }

  /**
   * A tool call the reply `llmNodeId` asked for (a reply this replay reused:
   * the call ids are the recorded ones). Its recorded execution, found by the
   * provider's call id, is reused when it finished, continued when it was
   * interrupted; a call the record has no execution for runs live.
   */
  enterTool(llmNodeId: string, toolCallId: string, name: string, input: unknown): CallStep {
    const frame = this.frames.get(llmNodeId);
    if (!frame) return LIVE;
    const candidate = frame.byToolCallId(toolCallId);
    if (
      candidate === null ||
      candidate.name !== name ||
      canonicalJson(toRecordable(input ?? {})) !== canonicalJson(candidate.input)
    )
      return { kind: "live", slot: frame.slot() };
    if (this.record.isReusable(candidate)) {
      frame.reuse(candidate.id);
      this.reusedModelCalls(this.record.modelCallsUnder(candidate.id));
      return { kind: "reuse", node: candidate };
    }
    return { kind: "continue", node: candidate, nodeId: this.continued.get(candidate.id), slot: frame.slot() };
  }

  /** An askUser under `callerId`. */
  enterAsk(callerId: string | null, question: string, choices: readonly string[] | null): AskStep {
    const frame = this.frameOf(callerId);
    if (!frame) return LIVE;
    const candidate = frame.next("ask");
    if (candidate === null) return { kind: "live", slot: frame.slot() };
    const recordedChoices = Array.isArray(candidate.metadata.choices) ? candidate.metadata.choices : null;
    if (candidate.input !== question || canonicalJson(recordedChoices) !== canonicalJson(choices)) {
      frame.diverged = true;
      return { kind: "live", slot: frame.slot() };
    }
    if (this.record.isReusable(candidate)) {
      frame.reuse(candidate.id);
      return { kind: "reuse", node: candidate };
    }
    if (candidate.metadata.status === "waiting") {
      frame.reuse(candidate.id);
      return { kind: "continue", node: candidate };
    }
    return { kind: "live", slot: frame.slot() };
  }

  /**
   * The calls made so far under `callId` in program order, for rendering its
   * next prompt (the reused recorded calls first), or null when `callId` is
   * not a call this replay continues.
   */
  callsOf(callId: string): readonly string[] | null {
    const frame = this.frames.get(callId);
    return frame ? frame.calls.filter((id): id is string => id !== null) : null;
  }

  /** What a child process started under `callerId` needs to carry on (null: the child runs live). */
  carrier(callerId: string | null): ReplayCarrier | null {
    const frame = this.frameOf(callerId);
    return frame ? frame.carrier(this.turnId, Object.fromEntries(this.continued)) : null;
  }

  private reusedModelCalls(count: number): void {
    if (count > 0) this.onModelCallsReused?.(count);
  }

  private frameOf(callerId: string | null): ReplayFrame | null {
    if (callerId === null || callerId === "") return this.frames.has("") ? this.root : null;
    return this.frames.get(callerId) ?? null;
  }
}

function keyOf(node: SessionNode): string | null {
  if (node.role === "code") return `code:${node.name}`;
  if (node.role === "llm") return "llm";
  if (node.role === "user" && node.name === "ask_user") return "ask";
  return null;
}
