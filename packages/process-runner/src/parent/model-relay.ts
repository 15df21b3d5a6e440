import { CancelledError, type Runtime } from "@openprogram/session-context";
import { recordedError } from "@openprogram/session-context/recordings";
import { holdsRecording } from "@openprogram/session-context/relay";
import { ModelRuntime, type ModelProvider, type ModelResponse } from "@openprogram/session-context/runtime";
import type { ModelCallMessage, ModelRelayStart, ParentMessage } from "../protocol.js";

/** The variables that name a recording: a child never opens the parent's recording itself. */
export const RECORDING_VARIABLES = ["OPENPROGRAM_RECORD", "OPENPROGRAM_REPLAY", "OPENPROGRAM_REPLAY_PACE"] as const;

/**
 * Answers a child's model calls with the parent's provider when that
 * provider records or replays (`--record`, `--replay`): the parent's one
 * recorder numbers the child's calls after its own and writes them to the
 * one file; the parent's one replay answers them in order from where the
 * parent got to. Null when the parent's runtime does neither.
 */
export class ModelCallRelay {
  private readonly open = new Map<number, AbortController>();

  private constructor(
    private readonly provider: ModelProvider,
    private readonly reply: (message: ParentMessage) => void,
    readonly start: ModelRelayStart,
  ) {}

  static for(runtime: Runtime | null, reply: (message: ParentMessage) => void): ModelCallRelay | null {
    if (!(runtime instanceof ModelRuntime) || !holdsRecording(runtime.provider)) return null;
    const { provider } = runtime;
    return new ModelCallRelay(provider, reply, {
      provider: provider.name,
      maxRetries: provider.maxRetries ?? null,
      model: runtime.model,
      defaults: JSON.parse(JSON.stringify(runtime.defaults)) as ModelRelayStart["defaults"],
    });
  }

  /** One call of the child's: its body, streamed pieces and end go back to the child. */
  call(message: ModelCallMessage): void {
    const { callId } = message;
    const controller = new AbortController();
    this.open.set(callId, controller);
    const end = (result: { response: ModelResponse } | { error: unknown }): void => {
      if (this.open.get(callId) !== controller) return;
      this.open.delete(callId);
      this.reply(
        "response" in result
          ? { type: "model_end", callId, response: result.response }
          : { type: "model_end", callId, error: recordedError(result.error) },
      );
    };
    // Called at once (not after a tick): the provider numbers calls in the order they arrive.
    const pending = (async () =>
      this.provider.complete(message.request, {
        signal: controller.signal,
        onRequestBody: (body) => this.reply({ type: "model_body", callId, body }),
        ...(message.stream ? { onText: (text: string) => this.reply({ type: "model_text", callId, text }) } : {}),
      }))();
    pending.then(
      (response) => end({ response }),
      (error: unknown) => end({ error }),
    );
  }

  /** The child's caller gave up on the call. */
  cancel(callId: number, reason: string): void {
    this.open.get(callId)?.abort(new CancelledError(reason));
  }

  /** A resumed turn in the child answered calls from its record. */
  skip(count: number): void {
    this.provider.skipCalls?.(count);
  }

  /** The child is gone: stop its calls. */
  cancelAll(reason: string): void {
    for (const controller of this.open.values()) controller.abort(new CancelledError(reason));
    this.open.clear();
  }
}

/** The child's environment: never a recording variable when the parent relays (nor OPENPROGRAM_RECORD ever). */
export function childEnvironment(env: NodeJS.ProcessEnv, relayed: boolean): NodeJS.ProcessEnv {
  const copy = { ...env };
  // Opening OPENPROGRAM_RECORD starts the file anew: a child doing so would truncate the parent's recording.
  delete copy.OPENPROGRAM_RECORD;
  if (relayed) for (const name of RECORDING_VARIABLES) delete copy[name];
  return copy;
}
