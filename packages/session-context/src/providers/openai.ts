import type OpenAIClient from "openai";
import { CancelledError, ProviderError } from "../errors.js";
import { chatCompletionsBody } from "./openai-body.js";
import { StreamedToolCalls } from "./streamed-tool-calls.js";
import { requestSignal } from "./request-signal.js";
import { brokenStreamError, unfinishedStreamError } from "./stream-failure.js";
import { requestBodyHook, sdkClientOptions, type HttpProviderOptions } from "./sdk-client-options.js";
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** Settings of the OpenAI-compatible provider; `baseUrl` reaches any OpenAI-compatible server. */
export type OpenAIProviderOptions = HttpProviderOptions;

/** Streaming chat completions through the official `openai` package. */
export class OpenAIChatProvider implements ModelProvider {
  readonly name = "openai";

  /** Retries of a failed request, made by the runtime. */
  get maxRetries(): number {
    return this.options.maxRetries ?? 2;
  }

  /** Made on the first request (the SDK is loaded then) and shared by every request after it. */
  private client: OpenAIClient | undefined;

  constructor(private readonly options: OpenAIProviderOptions) {}

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    const OpenAI = await loadSdk();
    const client = (this.client ??= new OpenAI(sdkClientOptions(this.options)));
    const linked = requestSignal(options.signal);
    try {
      const stream = await client.chat.completions.create(chatCompletionsBody(request), {
        signal: linked.signal,
        fetchOptions: requestBodyHook(options.onRequestBody),
      });
      let text = "";
      let model = request.model;
      let usage: ModelResponse["usage"];
      let finished = false;
      let finishReason: string | undefined;
      const calls = new StreamedToolCalls(this.name);
      try {
        for await (const chunk of stream) {
          if (chunk.model) model = chunk.model;
          // With stream_options.include_usage the last chunk (no choices) carries the counts.
          if (chunk.usage) {
            const cached = chunk.usage.prompt_tokens_details?.cached_tokens;
            usage = {
              inputTokens: chunk.usage.prompt_tokens,
              outputTokens: chunk.usage.completion_tokens,
              ...(typeof cached === "number" ? { cachedInputTokens: cached } : {}),
            };
          }
          const choice = chunk.choices[0];
          const piece = choice?.delta?.content;
          if (piece) {
            text += piece;
            options.onText?.(piece);
          }
          for (const delta of choice?.delta?.tool_calls ?? []) calls.add(delta);
          if (choice?.finish_reason) {
            finished = true;
            finishReason = choice.finish_reason;
          }
        }
      } catch (error) {
        throw brokenStreamError(this.name, error, text.length, options.signal);
      }
      // The SDK ends the iteration quietly when its request is aborted.
      if (options.signal.aborted) throw new CancelledError(options.signal.reason);
      if (!finished) throw unfinishedStreamError(this.name, "finish_reason", text.length);
      const toolCalls = calls.finish();
      return {
        text,
        model,
        ...(usage ? { usage } : {}),
        ...(finishReason ? { finishReason } : {}),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
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
    if (error instanceof ProviderError || error instanceof CancelledError) return error;
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
