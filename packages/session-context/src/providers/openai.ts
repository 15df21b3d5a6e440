import type OpenAIClient from "openai";
import { CancelledError, ProviderError } from "../errors.js";
import { chatCompletionsBody } from "./openai-body.js";
import { requestSignal } from "./request-signal.js";
import { sdkClientOptions, type HttpProviderOptions } from "./sdk-client-options.js";
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** Settings of the OpenAI-compatible provider; `baseUrl` reaches any OpenAI-compatible server. */
export type OpenAIProviderOptions = HttpProviderOptions;

/** Chat completions through the official `openai` package. */
export class OpenAIChatProvider implements ModelProvider {
  readonly name = "openai";

  constructor(private readonly options: OpenAIProviderOptions) {}

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    const OpenAI = await loadSdk();
    const client = new OpenAI(sdkClientOptions(this.options, options.onRequestBody));
    const linked = requestSignal(options.signal);
    try {
      const completion = await client.chat.completions.create(chatCompletionsBody(request), { signal: linked.signal });
      const choice = completion.choices[0];
      if (!choice) throw new ProviderError(this.name, null, "the response had no choices");
      return {
        text: choice.message?.content ?? "",
        model: completion.model ?? request.model,
        usage: {
          inputTokens: completion.usage?.prompt_tokens,
          outputTokens: completion.usage?.completion_tokens,
          cachedInputTokens: completion.usage?.prompt_tokens_details?.cached_tokens,
        },
        ...(choice.finish_reason ? { finishReason: choice.finish_reason } : {}),
      };
    } catch (error) {
      throw this.translate(OpenAI, error, options.signal);
    } finally {
      linked.release();
    }
  }

  /** The SDK serialises the body with JSON.stringify, keys in this order. */
  requestBody(request: ModelRequest): string {
    return JSON.stringify(chatCompletionsBody(request));
  }

  private translate(OpenAI: typeof OpenAIClient, error: unknown, signal: AbortSignal): Error {
    if (error instanceof ProviderError) return error;
    if (signal.aborted || error instanceof OpenAI.APIUserAbortError) return new CancelledError(signal.reason);
    if (error instanceof OpenAI.APIConnectionError) {
      return new ProviderError(
        this.name,
        null,
        `could not reach ${this.options.baseUrl ?? "api.openai.com"} (${error.message})`,
        { cause: error },
      );
    }
    if (error instanceof OpenAI.APIError) {
      return new ProviderError(
        this.name,
        typeof error.status === "number" ? error.status : null,
        providerMessage(error),
        { cause: error },
      );
    }
    return new ProviderError(this.name, null, (error as Error)?.message ?? String(error), { cause: error });
  }
}

let sdk: Promise<typeof OpenAIClient> | undefined;

/** The SDK is loaded on the first request: commands that never call a model should not pay for it at startup. */
function loadSdk(): Promise<typeof OpenAIClient> {
  sdk ??= import("openai").then((module) => module.default);
  return sdk;
}

function providerMessage(error: { error?: unknown; message: string }): string {
  const body = error.error as { message?: unknown } | undefined;
  if (body && typeof body.message === "string") return body.message;
  return error.message;
}
