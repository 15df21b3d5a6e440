/** What an asker is asked. */
export interface AskRequest {
  /** The ask_user node's id; answers refer to it. */
  questionId: string;
  sessionId: string;
  question: string;
  choices: string[] | null;
  timeoutMs: number | null;
  /** Returned when the question times out, if given. */
  default?: string;
}

/** What an asker answers: a value, or a refusal. */
export type AskResponse = { kind: "answer"; value: string } | { kind: "decline"; reason?: string };

/**
 * How askUser reaches a human for one entry point: a terminal prompt, a
 * browser dialog, a parent process, a script. The signal aborts when the
 * question times out or the turn is cancelled; the asker should stop waiting.
 */
export interface Asker {
  ask(request: AskRequest, options: { signal: AbortSignal }): Promise<AskResponse>;
}
