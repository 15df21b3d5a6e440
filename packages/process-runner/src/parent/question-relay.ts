import { AskUserUnavailableError, serializeError, type AskRequest, type Asker } from "@openprogram/session-context";
import type { AnswerMessage } from "../protocol.js";

/**
 * Answers the child's questions with the parent's own asker (not askUser: the
 * ask_user node is the child's, recorded once) and sends each answer back.
 */
export class QuestionRelay {
  private readonly pending = new Map<string, AbortController>();

  constructor(
    private readonly asker: Asker | null,
    private readonly reply: (message: AnswerMessage) => void,
  ) {}

  /** Asks the parent's asker; the answer (or its error) goes back to the child. */
  ask(request: AskRequest): void {
    if (!this.asker) {
      this.reply({
        type: "answer",
        questionId: request.questionId,
        error: serializeError(new AskUserUnavailableError(request.question)),
      });
      return;
    }
    const controller = new AbortController();
    this.pending.set(request.questionId, controller);
    this.asker.ask(request, { signal: controller.signal }).then(
      (response) =>
        this.settle(request.questionId, controller, { type: "answer", questionId: request.questionId, response }),
      (error: unknown) =>
        this.settle(request.questionId, controller, {
          type: "answer",
          questionId: request.questionId,
          error: serializeError(error),
        }),
    );
  }

  /** The child stopped waiting for this question. */
  cancel(questionId: string, reason: string): void {
    this.pending.get(questionId)?.abort(reason);
    this.pending.delete(questionId);
  }

  /** The child is gone: stop every open question. */
  cancelAll(reason: string): void {
    for (const controller of this.pending.values()) controller.abort(reason);
    this.pending.clear();
  }

  private settle(questionId: string, controller: AbortController, message: AnswerMessage): void {
    if (this.pending.get(questionId) !== controller) return;
    this.pending.delete(questionId);
    this.reply(message);
  }
}
