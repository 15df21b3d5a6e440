import { activeContext } from "../context/storage.js";
import { NothingToResumeError, SessionNotFoundError, TurnNotFoundError } from "../errors.js";
import { assertValidSessionId } from "../ids.js";
import { openStore } from "../store/open-store.js";
import { processIdentity } from "../store/file-lock.js";
import { isHolderAlive } from "../store/process-liveness.js";
import { isOtherHostProcessAlive } from "../store/other-hosts.js";
import type { SessionDB } from "../store/session-db.js";
import type { SessionNode } from "../store/types.js";
import { isPassingFailure, RecordView } from "./record-view.js";
import { storeInternals } from "../store/internal.js";

/** Which turn `describeTurn` and `findResumableTurn` look at. */
export interface FindTurnOptions {
  sessionId: string;
  /** Default: the session's latest turn. */
  turnId?: string | undefined;
  /** Default: the enclosing context's store, else the one under $OPENPROGRAM_HOME. */
  db?: SessionDB | undefined;
}

/** A pending question of a turn. */
export interface PendingQuestion {
  /** The ask_user node's id (answers refer to it). */
  questionId: string;
  question: string;
  choices: string[] | null;
}

/** What a turn recorded when it started, and where it stands now. */
export interface ResumableTurn {
  sessionId: string;
  turnId: string;
  /** Its top-level call's node id. */
  nodeId: string;
  /** The top-level function's name. */
  name: string;
  /** The top-level call's status: interrupted, failed, cancelled, running, ... */
  status: string;
  /** How the entry named the program (`module:...#...`, `program:<name>`, `research`), or null when it did not say. */
  program: string | null;
  /** The program's recorded input (undefined when it could not be recorded: see inputProblem). */
  input: unknown;
  /** Why the input could not be recorded, or null. */
  inputProblem: string | null;
  /** The runtime's provider and model when the turn started (null without a runtime). */
  provider: string | null;
  model: string | null;
  /** The question the turn waits for, or null. */
  question: PendingQuestion | null;
  /** True while the process that runs the turn (or resumes it) is alive: answers go to it, resumes are refused. */
  live: boolean;
  /** True when the turn can be resumed now (it stopped short, or waits for an answer, and no live process runs it). */
  resumable: boolean;
  /** The error its top-level call failed or was cancelled with (code, class name, message), or null. */
  error: { code: string; name: string; message: string } | null;
  /**
   * True when resuming can get further than the turn did: it was interrupted, cancelled, waits for an answer, or
   * failed for a reason that may not recur (the model, the network, the store, a question). False for an error the
   * program raised itself: resume would replay the same failure from the record; fix the program and run it again.
   */
  resumeHelps: boolean;
  /** Model calls, answers and calls that finished under it: a resume returns them from the record, at no cost. */
  finishedCalls: number;
}

/** The shape of `metadata.resumable` on a turn's top-level call. */
interface ResumableRecord {
  program?: unknown;
  input?: unknown;
  input_problem?: unknown;
  provider?: unknown;
  model?: unknown;
}

const STOPPED = new Set(["interrupted", "failed", "cancelled", "killed"]);

/** Turns resuming in this process right now (their claims name this pid, which is always alive). */
const resumingHere = new Set<string>();

/** Marks `turnId` as resuming here until `release()`. */
export function markResumingHere(turnId: string): { release: () => void } {
  resumingHere.add(turnId);
  return { release: () => void resumingHere.delete(turnId) };
}

/**
 * Describes a turn of the session for resuming: the given one, or by default
 * the latest turn. A turn that was resumed leads to the turn that resumed it.
 * Throws SessionNotFoundError, TurnNotFoundError, or NothingToResumeError when
 * no turn recorded what resuming needs.
 */
export function describeTurn(options: FindTurnOptions): ResumableTurn {
  const { sessionId, turnId } = options;
  assertValidSessionId(sessionId);
  const db = options.db ?? activeContext()?.db ?? openStore();
  if (!storeInternals(db).exists(sessionId)) throw new SessionNotFoundError(sessionId);
  const snapshot = storeInternals(db).snapshotSync(sessionId);
  const record = new RecordView(snapshot.byId, snapshot.ordered);
  const heads = turnHeads(record);
  let head: SessionNode | undefined;
  if (turnId !== undefined) {
    head = heads.find((node) => node.metadata.turn_id === turnId);
    if (!head) {
      const known = heads.filter((node) => describeHead(db, sessionId, record, node).resumable);
      throw new TurnNotFoundError(
        sessionId,
        turnId,
        known.map((node) => node.metadata.turn_id as string),
      );
    }
  } else {
    head = heads[heads.length - 1];
    if (!head)
      throw new NothingToResumeError(
        sessionId,
        "no turn recorded what resuming needs (turns started by this version of OpenProgram do).",
      );
  }
  return describeHead(db, sessionId, record, followResumes(record, head));
}

/** Like describeTurn, but the turn must be resumable now; says why not otherwise. */
export function findResumableTurn(options: FindTurnOptions): ResumableTurn {
  const { sessionId, turnId } = options;
  const turn = describeTurn(options);
  if (!turn.resumable && !turn.live) {
    throw new NothingToResumeError(
      sessionId,
      `its ${turnId === undefined ? "latest " : ""}turn ${turn.turnId} (${turn.name}) ${turn.status === "completed" ? "finished" : `is ${turn.status}`} and waits for no answer.` +
        (turnId === undefined ? " Pass a turn id to resume an earlier turn." : ""),
    );
  }
  return turn;
}

/** Each turn's first top-level call (the one that recorded `resumable`), in seq order. */
function turnHeads(record: RecordView): SessionNode[] {
  const seen = new Set<string>();
  const heads: SessionNode[] = [];
  for (const node of record.turnCalls) {
    const turnId = node.metadata.turn_id as string;
    if (seen.has(turnId) || !node.metadata.resumable) continue;
    seen.add(turnId);
    heads.push(node);
  }
  return heads;
}

/** A resumed turn's top-level call leads to its continuation, as far as continuations were written. */
function followResumes(record: RecordView, head: SessionNode): SessionNode {
  const seen = new Set<string>();
  let current = head;
  for (;;) {
    seen.add(current.id);
    const next = resumedBy(current)?.node_id;
    const continuation = next === undefined ? undefined : record.byId.get(next);
    if (!continuation || seen.has(continuation.id)) return current;
    current = continuation;
  }
}

function describeHead(db: SessionDB, sessionId: string, record: RecordView, head: SessionNode): ResumableTurn {
  const recorded = (head.metadata.resumable ?? {}) as ResumableRecord;
  const turnId = head.metadata.turn_id as string;
  const status = typeof head.metadata.status === "string" ? head.metadata.status : "unknown";
  const pending = record.pendingQuestions(head.id)[0];
  const liveTurns = storeInternals(db).liveTurnIds(sessionId);
  const live = liveTurns.includes(turnId) || claimIsLive(resumedBy(head), liveTurns, record);
  const stopped = STOPPED.has(status) || ((status === "running" || status === "waiting") && !live);
  const error = recordedError(head);
  return {
    sessionId,
    turnId,
    nodeId: head.id,
    name: head.name,
    status,
    program: typeof recorded.program === "string" ? recorded.program : null,
    input: "input" in recorded ? recorded.input : undefined,
    inputProblem:
      typeof recorded.input_problem === "string"
        ? recorded.input_problem
        : "input" in recorded
          ? null
          : "no input was recorded",
    provider: typeof recorded.provider === "string" ? recorded.provider : null,
    model: typeof recorded.model === "string" ? recorded.model : null,
    question: pending
      ? {
          questionId: pending.id,
          question: typeof pending.input === "string" ? pending.input : String(pending.input),
          choices: Array.isArray(pending.metadata.choices) ? pending.metadata.choices.map(String) : null,
        }
      : null,
    live,
    resumable: !live && (stopped || pending !== undefined),
    error,
    resumeHelps: status !== "failed" || pending !== undefined || (error !== null && isPassingFailure(error.code)),
    finishedCalls: record.finishedUnder(head.id),
  };
}

/** The error a call recorded (metadata.error), or null when it recorded none. */
function recordedError(node: SessionNode): ResumableTurn["error"] {
  const error = node.metadata.error as { code?: unknown; name?: unknown; message?: unknown } | null | undefined;
  if (!error || typeof error !== "object") return null;
  return {
    code: typeof error.code === "string" ? error.code : "error",
    name: typeof error.name === "string" ? error.name : "Error",
    message: typeof error.message === "string" ? error.message : "",
  };
}

/** What `metadata.resumed_by` holds on a top-level call some turn took over. */
export interface ResumedByClaim {
  turn_id: string;
  node_id: string;
  pid: number;
  host: string;
  /** When that process started (process-liveness.ts); absent in claims written before it was recorded. */
  start?: string;
}

/** The claim on a node, if it has one (a released claim is null). */
export function resumedBy(node: SessionNode): ResumedByClaim | null {
  const claim = node.metadata.resumed_by as Partial<ResumedByClaim> | null | undefined;
  if (!claim || typeof claim !== "object" || typeof claim.turn_id !== "string" || typeof claim.node_id !== "string")
    return null;
  return {
    turn_id: claim.turn_id,
    node_id: claim.node_id,
    pid: typeof claim.pid === "number" ? claim.pid : 0,
    host: typeof claim.host === "string" ? claim.host : "",
    ...(typeof claim.start === "string" ? { start: claim.start } : {}),
  };
}

/**
 * True while the turn that claimed a node may still be working on it: its
 * lease is live, its continuation was written meanwhile, or its process is
 * alive (a claim comes before the lease; another host cannot be checked).
 */
export function claimIsLive(
  claim: ResumedByClaim | null,
  liveTurns: readonly string[],
  record: RecordView | null,
): boolean {
  if (claim === null) return false;
  if (liveTurns.includes(claim.turn_id)) return true;
  if (record !== null && record.byId.has(claim.node_id)) return false;
  const { pid, host } = processIdentity();
  if (claim.host !== host) return claim.host !== "" && isOtherHostProcessAlive(claim.host, claim.pid);
  if (claim.pid === pid) return resumingHere.has(claim.turn_id);
  return claim.pid > 0 && isHolderAlive(claim.pid, claim.start);
}
