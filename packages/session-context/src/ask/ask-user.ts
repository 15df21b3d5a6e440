import { failSpan, parentContextOf, startAskSpan } from "../telemetry/spans.js";
import { callIdOf, requireContext } from "../context/accessors.js";
import type { AskOutcome } from "../context/events.js";
import type { ActiveContext } from "../context/types.js";
import {
  AskTimeoutError,
  AskUserUnavailableError,
  CancelledError,
  InvalidAnswerError,
  InvalidInputError,
  isCancellation,
  isSuspension,
  serializeError,
  UserDeclinedError,
} from "../errors.js";
import { nowSeconds } from "../time/now-seconds.js";
import type { SessionNode } from "../store/types.js";
import type { AskResponse } from "./types.js";
import { storeInternals } from "../store/internal.js";

/** Options of askUser. */
export interface AskUserOptions {
  /** The answer must be one of these (a 1-based number picks by position). */
  choices?: string[];
  /** Stop waiting after this long. */
  timeoutMs?: number;
  /** Returned (and recorded) when the question times out. */
  default?: string;
}

/**
 * Asks the human through this entry's asker and returns the answer. The
 * question and its outcome are recorded as an `ask_user` node under the
 * current call; the session is `needs_input` while it waits.
 *
 * Throws UserDeclinedError, AskTimeoutError (unless a default is given),
 * CancelledError, or AskUserUnavailableError when this entry has no asker.
 */
export async function askUser(question: string, options: AskUserOptions = {}): Promise<string> {
  const context = requireContext("askUser()");
  // The span lasts as long as the human takes.
  const { span } = startAskSpan(context.trace ?? parentContextOf(null), { sessionId: context.sessionId });
  try {
    const answer = await askAndRecord(context, question, options);
    span.end();
    return answer;
  } catch (error) {
    failSpan(span, error, { cancelled: isCancellation(error) });
    throw error;
  }
}

async function askAndRecord(context: ActiveContext, question: string, options: AskUserOptions): Promise<string> {
  validate(question, options);
  if (context.signal.aborted) throw new CancelledError(context.signal.reason);
  const choices = options.choices ? [...options.choices] : null;
  const timeoutMs = options.timeoutMs ?? null;
  const step = context.turn.replay?.enterAsk(callIdOf(context), question, choices) ?? null;
  if (step?.kind === "reuse") return step.node.output as string;
  // A question the interrupted turn left waiting is asked again on the same node: its id stays the answer's address.
  const node =
    step?.kind === "continue"
      ? step.node
      : await context.writer.append({
          role: "user",
          name: "ask_user",
          input: question,
          output: null,
          caller: callIdOf(context) ?? "",
          metadata: {
            kind: "ask_user",
            status: "waiting",
            choices,
            timeout_ms: timeoutMs,
            ...(options.default !== undefined ? { default: options.default } : {}),
          },
        });
  if (step?.kind === "live") step.slot?.fill(node.id);
  if (step?.kind === "continue") {
    const settled = answeredElsewhere(context, node.id);
    if (settled) return outcomeRecordedElsewhere(settled, question, timeoutMs);
  }
  /** Records the outcome unless another process answered first; resolves to that answer, or null. */
  const close = async (
    outcome: AskOutcome,
    output: string | null,
    extra: Record<string, unknown> = {},
  ): Promise<SessionNode | null> => {
    const written = await context.writer.updateIf(node.id, (current) =>
      current.metadata.status === "waiting"
        ? { output, metadata: { status: outcome, answered_at: nowSeconds(), ...extra } }
        : null,
    );
    if (!written) return answeredElsewhere(context, node.id);
    context.emit({ type: "question_closed", sessionId: context.sessionId, questionId: node.id, outcome });
    return null;
  };

  if (!context.asker) {
    const error = new AskUserUnavailableError(question);
    await close("failed", null, { error: serializeError(error) });
    throw error;
  }

  await context.setStatus("needs_input");
  context.emit({ type: "question", sessionId: context.sessionId, questionId: node.id, question, choices, timeoutMs });
  let elsewhere: SessionNode | null = null;
  try {
    const response = await waitForAnswer(context, {
      questionId: node.id,
      question,
      choices,
      timeoutMs,
      default: options.default,
    });
    if (response.kind === "recorded") {
      elsewhere = response.node;
    } else if (response.kind === "decline") {
      elsewhere = await close("declined", null, response.reason ? { reason: response.reason } : {});
      if (!elsewhere) throw new UserDeclinedError(question);
    } else {
      const answer = normaliseAnswer(response.value, choices, question);
      elsewhere = await close("answered", answer);
      if (!elsewhere) return answer;
    }
  } catch (error) {
    if (error instanceof UserDeclinedError) throw error;
    if (error instanceof TimedOut) {
      if (options.default !== undefined) {
        elsewhere = await close("timed_out", options.default, { used_default: true });
        if (!elsewhere) return options.default;
      } else {
        elsewhere = await close("timed_out", null, { used_default: false });
        if (!elsewhere) throw new AskTimeoutError(question, timeoutMs ?? 0);
      }
    } else if (isCancellation(error) || context.signal.aborted) {
      // A turn suspended (its process stops) leaves the question waiting on disk: answering it later resumes the turn.
      if (!isSuspension(context.signal.reason)) elsewhere = await close("cancelled", null);
      if (!elsewhere) throw error instanceof CancelledError ? error : new CancelledError(context.signal.reason);
    } else {
      elsewhere = await close("failed", null, { error: serializeError(error) });
      if (!elsewhere) throw error;
    }
  } finally {
    await restoreRunning(context);
  }
  return outcomeRecordedElsewhere(elsewhere, question, timeoutMs);
}

/** The question's node once another process recorded its outcome, or null while it still waits. */
function answeredElsewhere(context: ActiveContext, nodeId: string): SessionNode | null {
  let node: SessionNode | undefined;
  try {
    node = storeInternals(context.db).nodeMapSync(context.sessionId).get(nodeId);
  } catch {
    return null; // the session is unreadable right now; the next look or the asker settles it
  }
  return node && node.metadata.status !== "waiting" ? node : null;
}

/** What askUser gives for an outcome another process recorded (an answer from `openprogram answer`, say). */
function outcomeRecordedElsewhere(node: SessionNode, question: string, timeoutMs: number | null): string {
  switch (node.metadata.status) {
    case "answered":
      return typeof node.output === "string" ? node.output : String(node.output);
    case "declined":
      throw new UserDeclinedError(question);
    case "timed_out":
      if (node.metadata.used_default === true && typeof node.output === "string") return node.output;
      throw new AskTimeoutError(question, timeoutMs ?? 0);
    default:
      throw new CancelledError(`the question was closed elsewhere (${String(node.metadata.status)})`);
  }
}

class TimedOut extends Error {}

/** How often a waiting question looks for an answer recorded by another process. */
const EXTERNAL_ANSWER_POLL_MS = 200;

/** Races the asker against the timeout and the turn's signal; the asker's signal aborts when it loses. */
function waitForAnswer(
  context: ActiveContext,
  request: {
    questionId: string;
    question: string;
    choices: string[] | null;
    timeoutMs: number | null;
    default?: string | undefined;
  },
): Promise<AskResponse | { kind: "recorded"; node: SessionNode }> {
  const asker = context.asker as NonNullable<ActiveContext["asker"]>;
  return new Promise((resolve, reject) => {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    // Another process may answer on disk (`openprogram answer`, a dispatcher): look for it while waiting.
    const watch = setInterval(() => {
      const node = answeredElsewhere(context, request.questionId);
      if (node) settle(() => resolve({ kind: "recorded", node }), new Error("answered elsewhere"));
    }, EXTERNAL_ANSWER_POLL_MS).unref();
    const settle = (finish: () => void, abortReason?: unknown): void => {
      if (timer) clearTimeout(timer);
      clearInterval(watch);
      context.signal.removeEventListener("abort", onCancel);
      if (abortReason !== undefined) controller.abort(abortReason);
      finish();
    };
    const onCancel = (): void =>
      settle(() => reject(new CancelledError(context.signal.reason)), context.signal.reason ?? new Error("cancelled"));
    if (context.signal.aborted) {
      onCancel();
      return;
    }
    context.signal.addEventListener("abort", onCancel, { once: true });
    if (request.timeoutMs !== null) {
      timer = setTimeout(() => settle(() => reject(new TimedOut()), new TimedOut()), request.timeoutMs);
    }
    const { default: fallback, ...rest } = request;
    asker
      .ask(
        { ...rest, sessionId: context.sessionId, ...(fallback !== undefined ? { default: fallback } : {}) },
        { signal: controller.signal },
      )
      .then(
        (response) => settle(() => resolve(response)),
        (error: unknown) => settle(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
  });
}

/** After a question the session is back to "running" (its turn is still in progress). */
async function restoreRunning(context: ActiveContext): Promise<void> {
  try {
    await context.setStatus("running");
  } catch {
    // The store being unwritable is reported by the write that follows.
  }
}

/** An answer as recorded: a string, one of `choices` when given (a 1-based number picks one); InvalidAnswerError otherwise. */
export function normaliseAnswer(value: unknown, choices: string[] | null, question: string): string {
  if (typeof value !== "string")
    throw new InvalidAnswerError(`The answer to ${JSON.stringify(question)} must be a string, not ${typeof value}.`);
  if (!choices) return value;
  if (choices.includes(value)) return value;
  const position = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (position >= 1 && position <= choices.length) return choices[position - 1] as string;
  throw new InvalidAnswerError(
    `${JSON.stringify(value)} is not one of the choices for ${JSON.stringify(question)}: ${choices.join(", ")}.`,
  );
}

function validate(question: string, options: AskUserOptions): void {
  if (typeof question !== "string" || question.trim() === "")
    throw new InvalidInputError("askUser(question): question must be a non-empty string.");
  if (options.choices !== undefined) {
    if (
      !Array.isArray(options.choices) ||
      options.choices.length === 0 ||
      options.choices.some((choice) => typeof choice !== "string")
    ) {
      throw new InvalidInputError("askUser: choices must be a non-empty array of strings.");
    }
  }
  if (options.timeoutMs !== undefined && (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0)) {
    throw new InvalidInputError("askUser: timeoutMs must be a positive number of milliseconds.");
  }
  if (options.default !== undefined && typeof options.default !== "string")
    throw new InvalidInputError("askUser: default must be a string.");
}
