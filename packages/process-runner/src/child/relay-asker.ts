import { CancelledError, deserializeError, type AskResponse, type Asker } from "@openprogram/session-context";
import type { AnswerMessage, ChildMessage } from "../protocol.js";

/** An asker that asks the parent (which asks its own asker) and waits for the answer. */
export interface RelayAsker extends Asker {
  /** Delivers the parent's answer. */
  answer(message: AnswerMessage): void;
}

/** Relays askUser's questions to the parent over the channel. */
export function createRelayAsker(send: (message: ChildMessage) => Promise<void>): RelayAsker {
  const waiting = new Map<string, { resolve: (response: AskResponse) => void; reject: (error: Error) => void }>();
  return {
    ask(request, { signal }) {
      return new Promise<AskResponse>((resolve, reject) => {
        if (signal.aborted) {
          reject(new CancelledError(signal.reason));
          return;
        }
        const onAbort = (): void => {
          waiting.delete(request.questionId);
          void send({ type: "ask_cancel", questionId: request.questionId });
          reject(new CancelledError(signal.reason));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        waiting.set(request.questionId, {
          resolve: (response) => {
            signal.removeEventListener("abort", onAbort);
            resolve(response);
          },
          reject: (error) => {
            signal.removeEventListener("abort", onAbort);
            reject(error);
          },
        });
        void send({ type: "ask", request });
      });
    },
    answer(message) {
      const pending = waiting.get(message.questionId);
      if (!pending) return;
      waiting.delete(message.questionId);
      if (message.error) pending.reject(deserializeError(message.error));
      else if (message.response) pending.resolve(message.response);
      else
        pending.reject(
          new Error(`The parent answered question ${message.questionId} with neither a response nor an error.`),
        );
    },
  };
}
