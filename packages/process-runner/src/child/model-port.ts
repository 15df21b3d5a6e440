import { CancelledError } from "@openprogram/session-context";
import { errorFromRecorded, type ModelCallPort } from "@openprogram/session-context/relay";
import type { ModelResponse } from "@openprogram/session-context/runtime";
import type { ChildMessage, ModelBodyMessage, ModelEndMessage, ModelTextMessage } from "../protocol.js";

interface OpenCall {
  onText: (text: string) => void;
  onBody: (body: string) => void;
  resolve: (response: ModelResponse) => void;
  reject: (error: Error) => void;
}

/** The child's end of the model-call relay: each call goes to the parent's provider, in the order made. */
export class ParentModelPort implements ModelCallPort {
  private next = 0;
  private readonly open = new Map<number, OpenCall>();

  constructor(
    private readonly provider: string,
    private readonly send: (message: ChildMessage) => unknown,
  ) {}

  call(
    request: Parameters<ModelCallPort["call"]>[0],
    handlers: Parameters<ModelCallPort["call"]>[1],
  ): Promise<ModelResponse> {
    const callId = this.next++;
    const { signal } = handlers;
    return new Promise<ModelResponse>((resolve, reject) => {
      const onAbort = (): void => {
        if (!this.open.delete(callId)) return;
        this.send({ type: "model_cancel", callId, reason: String(signal.reason ?? "cancelled") });
        reject(new CancelledError(signal.reason));
      };
      this.open.set(callId, {
        onText: handlers.onText,
        onBody: handlers.onBody,
        resolve: (response) => {
          signal.removeEventListener("abort", onAbort);
          resolve(response);
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      signal.addEventListener("abort", onAbort, { once: true });
      this.send({ type: "model_call", callId, request, stream: handlers.stream });
    });
  }

  skip(count: number): void {
    this.send({ type: "model_skip", count });
  }

  /** A message of the parent's about one of this port's calls. */
  handle(message: ModelBodyMessage | ModelTextMessage | ModelEndMessage): void {
    const call = this.open.get(message.callId);
    if (!call) return;
    if (message.type === "model_body") call.onBody(message.body);
    else if (message.type === "model_text") call.onText(message.text);
    else {
      this.open.delete(message.callId);
      if (message.response) call.resolve(message.response);
      else
        call.reject(
          errorFromRecorded(
            this.provider,
            message.error ?? { name: "Error", code: "internal_error", message: "no reply" },
          ),
        );
    }
  }
}
