import { trace } from "@opentelemetry/api";
import { isAgenticFunction, type AgenticFunction } from "../agentic/agentic-function.js";
import type { Asker } from "../ask/types.js";
import type { Budgets } from "../budgets/budget-types.js";
import { requireContext } from "../context/accessors.js";
import type { ActiveContext } from "../context/types.js";
import type { SessionEventSink } from "../context/events.js";
import { sessionContext } from "../context/session-context.js";
import { activeContext } from "../context/storage.js";
import {
  AnswerRequiredError,
  InvalidInputError,
  SessionBusyError,
  SessionNotFoundError,
  TurnNotResumableError,
} from "../errors.js";
import { assertValidSessionId, mintNodeId } from "../ids.js";
import type { Runtime } from "../runtime/types.js";
import { openStore } from "../store/open-store.js";
import type { SessionDB } from "../store/session-db.js";
import { parseTraceparent } from "../telemetry/spans.js";
import { checkAnswer, recordAnswer } from "./answer-question.js";
import { claimTurn, releaseClaim } from "./claim-turn.js";
import { findResumableTurn, markResumingHere, type ResumableTurn } from "./find-resumable.js";
import { loadModuleProgram } from "./module-program.js";
import { parseProgramRef, type TurnProgram } from "./program-ref.js";
import { checkRecordedModule, type RecordedModule, type RecordedModulePolicy } from "./recorded-module.js";
import { RecordView } from "./record-view.js";
import { Replay } from "./replay.js";
import { storeInternals } from "../store/internal.js";

/** What a resumed turn runs again: an agentic function, or an entry with its own `run`. */
export type ResumableProgram = AgenticFunction<never, unknown> | { run(input: unknown): unknown };

/** Finds the program a turn recorded by its ref (null: not one this entry knows). */
export type ProgramResolver = (
  ref: string,
  turn: ResumableTurn,
) => ResumableProgram | null | undefined | Promise<ResumableProgram | null | undefined>;

/** Options of `resumeTurn`. */
export interface ResumeTurnOptions {
  sessionId: string;
  /** The turn to resume; default: the session's latest turn, which must be resumable. */
  turnId?: string;
  /** The answer to the question the turn waits for (recorded on that question's node). */
  answer?: string;
  /** With `answer`: the question it answers (must be the pending one). */
  questionId?: string;
  /** The program to run again, whatever the turn recorded (required for turns started from code without `program`). */
  program?: ResumableProgram;
  /** Finds the program by the ref the turn recorded; JavaScript `module:` refs are loaded without it. */
  resolveProgram?: ProgramResolver;
  /**
   * Who vouches for a `module:` ref the turn recorded, checked before it is
   * imported (see checkRecordedModule). Default: only modules under the working directory.
   */
  modules?: RecordedModulePolicy;
  /** Imports a module once checked (its `modulePath` is the real path) and picks the export; default: Node's import, JavaScript only. */
  loadModule?: (module: RecordedModule) => Promise<ResumableProgram>;
  db?: SessionDB;
  runtime?: Runtime | null;
  asker?: Asker | null;
  signal?: AbortSignal;
  onEvent?: SessionEventSink;
  /** The entry resuming ("cli", "web", ...); default "code". */
  source?: string;
  /** The budgets of the resumed turn (raise the one that stopped it). */
  budgets?: Budgets;
}

/**
 * Resumes a turn that was interrupted, failed, cancelled, or waits for an
 * answer, and resolves to what its program returns. The program runs again
 * with the input recorded when the turn started, as a new turn whose
 * top-level call continues the interrupted one (`metadata.resumes`); each
 * agentic call, exec and question that matches the record by position and
 * input gives its recorded outcome without running again, and from the
 * first one that does not match, its caller's calls run live. So no model
 * request is repeated, and the prompts sent after the resume are the ones an
 * uninterrupted run would have sent.
 *
 * Inside a session context on the same session, the enclosing turn becomes
 * the resumed turn; otherwise it installs its own context. Throws
 * SessionNotFoundError, TurnNotFoundError, NothingToResumeError,
 * NoPendingQuestionError, InvalidAnswerError, TurnNotResumableError,
 * AnswerRequiredError or SessionBusyError (the turn still runs, or another
 * resume won) before anything runs.
 */
export async function resumeTurn<T = unknown>(request: ResumeTurnOptions | PreparedResume): Promise<T> {
  const prepared = request instanceof PreparedResume ? request : await prepareResume(request);
  const { turn, program, answer, options, db } = prepared;
  const { sessionId } = turn;
  const run = (): Promise<T> => continueTurn<T>(turn, program, answer);
  const outer = activeContext();
  if (outer && outer.sessionId === sessionId && outer.db.root === db.root) return run();
  const recorded = recordedProgram(turn);
  return sessionContext(
    {
      sessionId,
      db,
      source: options.source ?? "code",
      fromEnvironment: false,
      ...(recorded ? { program: recorded } : {}),
      ...(options.runtime !== undefined ? { runtime: options.runtime } : {}),
      ...(options.asker !== undefined ? { asker: options.asker } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
      ...(options.onEvent !== undefined ? { onEvent: options.onEvent } : {}),
      ...(options.budgets !== undefined ? { budgets: options.budgets } : {}),
    },
    run,
  );
}

/** A resume checked and ready to run (see `prepareResume`). */
export class PreparedResume {
  /** @internal */
  constructor(
    /** The turn that will be resumed. */
    readonly turn: ResumableTurn,
    /** The program that will run again. */
    readonly program: ResumableProgram,
    /** The answer that will be recorded, normalised (a choice number becomes the choice). */
    readonly answer: string | undefined,
    readonly options: ResumeTurnOptions,
    readonly db: SessionDB,
  ) {}

  /** The program as the resumed turn records it (pass it to sessionContext when entering the turn yourself). */
  get recordedProgram(): TurnProgram | null {
    return recordedProgram(this.turn);
  }
}

/**
 * Everything `resumeTurn` checks before it runs anything: the session, the
 * turn, the answer, the program. Entries call it while validating their
 * input, so that a bad request fails before any turn is entered, then pass
 * the result to `resumeTurn` (inside their own sessionContext on the session,
 * whose turn becomes the resumed one). Throws what resumeTurn throws.
 */
export async function prepareResume(options: ResumeTurnOptions): Promise<PreparedResume> {
  checkOptions(options);
  const { sessionId } = options;
  const db = options.db ?? activeContext()?.db ?? openStore();
  if (!storeInternals(db).exists(sessionId)) throw new SessionNotFoundError(sessionId);
  // A turn its process left running is recorded interrupted first (its question stays waiting).
  await db.recover(sessionId);
  const turn = findResumableTurn({ db, sessionId, turnId: options.turnId });
  if (turn.live) {
    throw new SessionBusyError(
      sessionId,
      `turn ${turn.turnId} is still running in another process` +
        (turn.question
          ? "; answer its question with answerQuestion() and that process continues"
          : "; wait for it to finish or stop it"),
    );
  }
  const answer = options.answer === undefined ? undefined : checkAnswer(turn, options.answer, options.questionId);
  if (turn.inputProblem !== null) {
    throw new TurnNotResumableError(
      `Turn ${turn.turnId} of session '${sessionId}' cannot be resumed: ${turn.inputProblem}. Run it anew instead.`,
    );
  }
  return new PreparedResume(turn, await findProgram(turn, options), answer, options, db);
}

/** Inside the resumed turn's context: claim the turn, record the answer, replay. */
async function continueTurn<T>(turn: ResumableTurn, program: ResumableProgram, answer: string | undefined): Promise<T> {
  const context = requireContext("resumeTurn()");
  if (turn.question && answer === undefined && !context.asker)
    throw new AnswerRequiredError(turn.sessionId, turn.question.questionId, turn.question.question);
  const continuationId = mintNodeId();
  const resuming = markResumingHere(context.turn.turnId);
  try {
    await claimTurn(context, turn, continuationId);
    linkToResumedTrace(context, turn.nodeId);
    await context.beginTurn();
    if (answer !== undefined && turn.question) await recordAnswer(context, turn.question.questionId, answer);
    context.turn.program = recordedProgram(turn);
    const snapshot = storeInternals(context.db).snapshotSync(context.sessionId);
    const replay = new Replay(
      new RecordView(snapshot.byId, snapshot.ordered),
      turn.turnId,
      new Map([[turn.nodeId, continuationId]]),
    );
    // Under a replayed recording, what the record answers was never asked of the provider: its calls are skipped.
    replay.onModelCallsReused = (count) => context.runtime?.provider.skipCalls?.(count);
    const previous = context.turn.replay;
    context.turn.replay = replay;
    try {
      return (await invoke(program, turn.input)) as T;
    } finally {
      context.turn.replay = previous;
      // Written here or by a child process: the claim stands. Never written: give the turn back.
      if (!storeInternals(context.db).nodeMapSync(context.sessionId).has(continuationId))
        await releaseClaim(context, turn);
    }
  } finally {
    resuming.release();
  }
}

/** The resumed turn's trace gets a link from this one (a link, not a parent: they are two turns). */
function linkToResumedTrace(context: ActiveContext, resumedNodeId: string): void {
  const recorded = storeInternals(context.db).nodeMapSync(context.sessionId).get(resumedNodeId)?.metadata.traceparent;
  const resumed = typeof recorded === "string" ? parseTraceparent(recorded) : null;
  const span = context.trace ? trace.getSpan(context.trace) : undefined;
  if (resumed && span) span.addLink({ context: resumed, attributes: { "openprogram.link": "resumes" } });
}

function invoke(program: ResumableProgram, input: unknown): Promise<unknown> {
  if (isAgenticFunction(program)) return (program as (input: unknown) => Promise<unknown>)(input);
  return Promise.resolve((program as { run(input: unknown): unknown }).run(input));
}

function recordedProgram(turn: ResumableTurn): TurnProgram | null {
  return turn.program === null ? null : { ref: turn.program, input: turn.input };
}

async function findProgram(turn: ResumableTurn, options: ResumeTurnOptions): Promise<ResumableProgram> {
  if (options.program !== undefined) return checkProgram(options.program, "resumeTurn: program");
  const label = `Turn ${turn.turnId} of session '${turn.sessionId}'`;
  if (turn.program === null) {
    throw new TurnNotResumableError(
      `${label} ran ${turn.name} from code that did not say which program it was; pass resumeTurn({ program }) ` +
        "with that agentic function (or { run(input) }), or start such turns with sessionContext({ program }).",
    );
  }
  const found = options.resolveProgram ? await options.resolveProgram(turn.program, turn) : null;
  if (found) return checkProgram(found, `the program found for ${turn.program}`);
  const ref = parseProgramRef(turn.program);
  if (ref.kind === "module") {
    // The record is not the user's word: check the module before anything imports it.
    const module = await checkRecordedModule(turn.program, label, options.modules);
    if (options.loadModule) return checkProgram(await options.loadModule(module), `the program ${turn.program}`);
    return loadModuleProgram(module.modulePath, module.exportName, label);
  }
  throw new TurnNotResumableError(
    `${label} ran the program '${turn.program}', which this entry cannot find` +
      (ref.kind === "registered"
        ? ": it was registered with a dispatcher; resume it there (the `resume` frame)."
        : "; pass resumeTurn({ program }) or resolveProgram."),
  );
}

function checkProgram(program: unknown, what: string): ResumableProgram {
  if (isAgenticFunction(program)) return program;
  if (program !== null && typeof program === "object" && typeof (program as { run?: unknown }).run === "function")
    return program as ResumableProgram;
  throw new InvalidInputError(`${what} must be an agentic function or an object with a run(input) method.`);
}

function checkOptions(options: ResumeTurnOptions): void {
  if (options === null || typeof options !== "object")
    throw new InvalidInputError("resumeTurn(options): options must be { sessionId, turnId?, answer?, ... }.");
  assertValidSessionId(options.sessionId);
  if (options.turnId !== undefined && (typeof options.turnId !== "string" || options.turnId === ""))
    throw new InvalidInputError("resumeTurn: turnId must be a turn id such as turn_0123456789.");
  if (options.answer !== undefined && typeof options.answer !== "string")
    throw new InvalidInputError("resumeTurn: answer must be a string.");
  if (options.questionId !== undefined && options.answer === undefined)
    throw new InvalidInputError("resumeTurn: questionId names the question an answer is for; pass answer too.");
}
