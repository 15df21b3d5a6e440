import type AnthropicClient from "@anthropic-ai/sdk";
import { CancelledError, ProviderError } from "../errors.js";
import {
  anthropicMessages,
  anthropicToolChoice,
  type AnthropicMessage,
  type AnthropicToolChoice,
} from "./anthropic-messages.js";
import { requestSignal } from "./request-signal.js";
import { StreamedToolCalls } from "./streamed-tool-calls.js";
import { brokenStreamError, unfinishedStreamError } from "./stream-failure.js";
import { requestBodyHook, sdkClientOptions, type HttpProviderOptions } from "./sdk-client-options.js";
import type { CompleteOptions, ModelProvider, ModelRequest, ModelResponse, ReportedUsage } from "./types.js";

/** Settings of the Anthropic provider. */
export interface AnthropicProviderOptions extends HttpProviderOptions {
  /** The Messages API requires max_tokens; used when the request sets none. */
  defaultMaxTokens?: number;
}

/** Claude through the official `@anthropic-ai/sdk` Messages API, streamed (server-sent events). */
export class AnthropicProvider implements ModelProvider {
  readonly name = "anthropic";

  /** Retries of a failed request, made by the runtime. */
  get maxRetries(): number {
    return this.options.maxRetries ?? 2;
  }

  /** Made on the first request (the SDK is loaded then) and shared by every request after it. */
  private client: AnthropicClient | undefined;

  constructor(private readonly options: AnthropicProviderOptions) {}

  async complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse> {
    const Anthropic = await loadSdk();
    const client = (this.client ??= new Anthropic(sdkClientOptions(this.options)));
    const linked = requestSignal(options.signal);
    try {
      const stream = await client.messages.create(this.messagesBody(request), {
        signal: linked.signal,
        fetchOptions: requestBodyHook(options.onRequestBody),
      });
      let text = "";
      let model = request.model;
      const usage: ReportedUsage = {};
      let finished = false;
      let finishReason: string | undefined;
      const calls = new StreamedToolCalls(this.name);
      try {
        for await (const event of stream) {
          if (event.type === "message_start") {
            model = event.message.model;
            takeAnthropicUsage(usage, event.message.usage);
          } else if (event.type === "content_block_delta" && event.delta.type === "text_delta") {
            text += event.delta.text;
            options.onText?.(event.delta.text);
          } else if (event.type === "content_block_start" && event.content_block.type === "tool_use") {
            calls.add({ index: event.index, id: event.content_block.id, function: { name: event.content_block.name } });
          } else if (event.type === "content_block_delta" && event.delta.type === "input_json_delta") {
            calls.add({ index: event.index, function: { arguments: event.delta.partial_json } });
          } else if (event.type === "message_delta") {
            // Cumulative counts; the input ones are null when unchanged since message_start.
            takeAnthropicUsage(usage, event.usage);
            finishReason = event.delta.stop_reason ?? finishReason;
          } else if (event.type === "message_stop") {
            finished = true;
          }
        }
      } catch (error) {
        throw brokenStreamError(this.name, error, text.length, options.signal);
      }
      // The SDK ends the iteration quietly when its request is aborted.
      if (options.signal.aborted) throw new CancelledError(options.signal.reason);
      if (!finished) throw unfinishedStreamError(this.name, "message_stop", text.length);
      const toolCalls = calls.finish();
      return {
        text,
        model,
        usage,
        ...(finishReason ? { finishReason } : {}),
        ...(toolCalls.length > 0 ? { toolCalls } : {}),
      };
    } catch (error) {
      if (error instanceof ProviderError || error instanceof CancelledError) throw error;
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
    const tools = request.tools ?? [];
    return {
      model: request.model,
      max_tokens: request.maxTokens ?? this.options.defaultMaxTokens ?? 4096,
      ...(system.length > 0 ? { system: system.join("\n\n") } : {}),
      messages: anthropicMessages(request.messages.filter((entry) => entry.role !== "system")),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(tools.length > 0
        ? {
            tools: tools.map((tool) => ({
              name: tool.name,
              description: tool.description,
              input_schema: { type: "object" as const, ...tool.parameters },
            })),
            ...(request.toolChoice !== undefined || request.parallelToolCalls === false
              ? { tool_choice: anthropicToolChoice(request.toolChoice ?? "auto", request.parallelToolCalls) }
              : {}),
          }
        : {}),
      ...(request.responseFormat
        ? { output_config: { format: { type: "json_schema" as const, schema: request.responseFormat.schema } } }
        : {}),
      stream: true,
    };
  }
}

/** The Messages API request body this provider sends. */
interface MessagesBody {
  model: string;
  max_tokens: number;
  system?: string;
  messages: AnthropicMessage[];
  temperature?: number;
  tools?: Array<{ name: string; description: string; input_schema: { type: "object"; [key: string]: unknown } }>;
  tool_choice?: AnthropicToolChoice;
  output_config?: { format: { type: "json_schema"; schema: Record<string, unknown> } };
  stream: true;
}

/** The usage fields of message_start's message and of message_delta, as the wire carries them. */
interface AnthropicUsageFields {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** Takes every count the event reports (a later event's counts are cumulative and win); the node records only those. */
function takeAnthropicUsage(usage: ReportedUsage, fields: AnthropicUsageFields): void {
  if (typeof fields.input_tokens === "number") usage.inputTokens = fields.input_tokens;
  if (typeof fields.output_tokens === "number") usage.outputTokens = fields.output_tokens;
  if (typeof fields.cache_read_input_tokens === "number") usage.cachedInputTokens = fields.cache_read_input_tokens;
  if (typeof fields.cache_creation_input_tokens === "number")
    usage.cacheWriteInputTokens = fields.cache_creation_input_tokens;
}

let sdk: Promise<typeof AnthropicClient> | undefined;

/** Loaded on the first request (it is the heaviest import of the core). */
function loadSdk(): Promise<typeof AnthropicClient> {
  sdk ??= import("@anthropic-ai/sdk").then((module) => module.default);
  return sdk;
}
