import { InvalidInputError, ScriptExhaustedError } from "../errors.js";
import { DEFAULT_MAX_INPUT_BYTES, readTextFileCapped } from "../input/read-capped.js";
import { abortableSleep } from "../time/abortable-sleep.js";
import type { AskRequest, AskResponse, Asker } from "./types.js";

/** One scripted answer: a string answers; `{ decline: true }` declines; `delayMs` waits first. */
export type ScriptedAnswer = string | { answer?: string; decline?: boolean; reason?: string; delayMs?: number };

/** An asker that answers from a list, in order, and records the questions it got. */
export interface ScriptedAsker extends Asker {
  /** Every question asked, in order. */
  readonly questions: AskRequest[];
  /** Answers not used yet. */
  readonly remaining: number;
}

/**
 * Answers questions from a list, in order (for tests and `--answers` files).
 * Running out of answers is an error naming the question, never a silent default.
 */
export function createScriptedAsker(answers: readonly ScriptedAnswer[], source = "the answer list"): ScriptedAsker {
  const queue = [...answers];
  const questions: AskRequest[] = [];
  return {
    questions,
    get remaining() {
      return queue.length;
    },
    async ask(request, { signal }): Promise<AskResponse> {
      questions.push(request);
      const next = queue.shift();
      if (next === undefined) {
        throw new ScriptExhaustedError(
          `No scripted answer left for the question ${JSON.stringify(request.question)}; add one to ${source}.`,
        );
      }
      if (typeof next === "string") return { kind: "answer", value: next };
      if (next.delayMs) await abortableSleep(next.delayMs, signal);
      if (next.decline) return next.reason ? { kind: "decline", reason: next.reason } : { kind: "decline" };
      return { kind: "answer", value: next.answer ?? "" };
    },
  };
}

/** Options of `readAnswersFile`. */
export interface ReadAnswersOptions {
  /** Read at most this many bytes (default DEFAULT_MAX_INPUT_BYTES); more is an InputTooLargeError. */
  maxBytes?: number;
  /** How to raise the limit, quoted in the error (e.g. the variable that sets it). */
  limitHint?: string;
}

/** Reads an answers file: a JSON array of answers, or one answer per line of plain text. */
export function readAnswersFile(path: string, options: ReadAnswersOptions = {}): ScriptedAnswer[] {
  const text = readTextFileCapped(path, {
    maxBytes: options.maxBytes ?? DEFAULT_MAX_INPUT_BYTES,
    label: `the answers file ${path}`,
    ...(options.limitHint !== undefined ? { limitHint: options.limitHint } : {}),
  });
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new InvalidInputError(
        `The answers file ${path} starts like JSON but is not valid JSON: ${(error as Error).message}.`,
      );
    }
    if (!Array.isArray(parsed) || !parsed.every(isScriptedAnswer)) {
      throw new InvalidInputError(
        `The answers file ${path} must be a JSON array of strings or {"answer"|"decline"} objects.`,
      );
    }
    return parsed;
  }
  return text.split(/\r?\n/).filter((line, index, lines) => line !== "" || index < lines.length - 1);
}

function isScriptedAnswer(value: unknown): value is ScriptedAnswer {
  return typeof value === "string" || (value !== null && typeof value === "object" && !Array.isArray(value));
}
