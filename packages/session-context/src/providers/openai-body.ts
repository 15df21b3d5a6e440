import type { ModelRequest } from "./types.js";

/** The chat-completions request body for a request; the OpenAI and scripted providers share it. */
export function chatCompletionsBody(request: ModelRequest): {
  model: string;
  messages: Array<{ role: "system" | "user" | "assistant"; content: string }>;
  max_tokens?: number;
  temperature?: number;
} {
  return {
    model: request.model,
    messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
  };
}
