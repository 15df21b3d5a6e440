import type AnthropicClient from "@anthropic-ai/sdk";
import { CancelledError, ProviderError } from "../errors.js";
import { requestSignal } from "./request-signal.js";
import { sdkClientOptions, type HttpProviderOptions } from "./sdk-client-options.js";
import type { ChatMessage, CompleteOptions, ModelProvider, ModelRequest, ModelResponse } from "./types.js";

/** Settings of the Anthropic provider. */
export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** The Messages API requires max_tokens; used when the request sets none. */
  defaultMaxTokens?: number;
}

/** Claude through the official `@anthropic-ai/sdk` Messages API. */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";

  constructor(private readonly options: AnthropicProviderOptions) {}

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    const Anthropic = await loadSdk();
    const client = new Anthropic(sdkClientOptions(this.options, options.onRequestBody));
    const linked = requestSignal(options.signal);
    try {
      const message = await client.messages.create(this.messagesBody(request), { signal: linked.signal });
      const text = message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
      return {
        text,
        model: message.model,
        usage: {
          inputTokens: message.usage.input_tokens,
          outputTokens: message.usage.output_tokens,
          cachedInputTokens: message.usage.cache_read_input_tokens ?? undefined,
        },
        ...(message.stop_reason ? { finishReason: message.stop_reason } : {}),
      };
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      if (options.signal.aborted || error instanceof Anthropic.APIUserAbortError)
        throw new CancelledError(options.signal.reason);
      if (error instanceof Anthropic.APIConnectionError) {
        throw new ProviderError(
          this.name,
          null,
          `could not reach ${this.options.baseUrl ?? "api.anthropic.com"} (${error.message})`,
          { cause: error },
        );
      }
      if (error instanceof Anthropic.APIError) {
        const body = error.error as { error?: { message?: string } } | undefined;
        throw new ProviderError(
          this.name,
          typeof error.status === "number" ? error.status : null,
          body?.error?.message ?? error.message,
          { cause: error },
        );
      }
      throw new ProviderError(this.name, null, (error as Error)?.message ?? String(error), { cause: error });
    } finally {
      linked.release();
    }
  }

  /** The SDK serialises the body with JSON.stringify, keys in this order. */
  requestBody(request: ModelRequest): string {
    return JSON.stringify(this.messagesBody(request));
  }

  private messagesBody(request: ModelRequest): MessagesBody {
    const system = request.messages.filter((message) => message.role === "system").map((message) => message.content);
    return {
      model: request.model,
      max_tokens: request.maxTokens ?? this.options.defaultMaxTokens ?? 4096,
      ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
      messages: alternating(request.messages.filter((entry) => entry.role !== "system")),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    };
  }
}

/** The Messages API request body this provider sends. */
interface MessagesBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: Array<{ role: "user" | "assistant"; content: string }>;
  temperature?: number;
}

let sdk: Promise<typeof AnthropicClient> | undefined;

/** Loaded on the first request (it is the heaviest import of the core). */
function loadSdk(): Promise<typeof AnthropicClient> {
  sdk ??= import("@anthropic-ai/sdk").then((module) => module.default);
  return sdk;
}

/** The Messages API wants user/assistant turns alternating and starting with the user. */
function alternating(messages: ChatMessage[]): Array<{ role: "user" | "assistant"; content: string }> {
  const result: Array<{ role: "user" | "assistant"; content: string }> = [];
  for (const message of messages) {
    const role = message.role === "assistant" ? "assistant" : "user";
    const last = result[result.length - 1];
    if (last && last.role === role) last.content = `${last.content}\n\n${message.content}`;
    else result.push({ role, content: message.content });
  }
  if (result[0]?.role === "assistant") result.unshift({ role: "user", content: "(The conversation so far follows.)" });
  return result;
}
