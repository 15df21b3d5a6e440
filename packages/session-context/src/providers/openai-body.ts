import type { ModelRequest } from "./types.js";

/** A streaming chat-completions request body. */
export interface ChatCompletionsBody {
  model: string;
  messages: Array<{ role: "system" | "user" | "assistant"; content: string }>;
  max_tokens?: number;
  temperature?: number;
  stream: true;
  stream_options: { include_usage: true };
}

/**
 * The chat-completions request body for a request; the OpenAI and scripted
 * providers share it. Always streaming, with usage in the last chunk, so every
 * entry sends the same bytes.
 */
export function chatCompletionsBody(request: ModelRequest): ChatCompletionsBody {
  return {
    model: request.model,
    messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    stream: true,
    stream_options: { include_usage: true },
  };
}
