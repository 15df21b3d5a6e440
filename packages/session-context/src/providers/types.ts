import type { ContentPart } from "../content/content-blocks.js";

/**
 * One chat message as sent to a provider. An assistant message may carry the
 * tool calls its reply asked for; a `tool` message is one call's result.
 */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  /** user: the message as content blocks (text, images, files, audio), sent instead of `content` (its text). */
  parts?: ContentPart[];
  /** assistant: the tools the reply asked to call, in the model's order. */
  toolCalls?: ToolCall[];
  /** tool: the id of the call this message answers. */
  toolCallId?: string;
  /** tool: the tool's name. */
  toolName?: string;
  /** tool: the result is an error (unknown tool, bad arguments, a tool that threw, a refusal). */
  isError?: boolean;
}

/** A tool call a model asked for. */
export interface ToolCall {
  /** The provider's id of the call (OpenAI `call_...`, Anthropic `toolu_...`). */
  id: string;
  name: string;
  /** The arguments as JSON text, as the model wrote them (or as rendered from the record). */
  arguments: string;
}

/** A tool as offered to the model. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
}

/** Whether the model may, must or must not call a tool, or which one it must call. */
export type ToolChoice = "auto" | "required" | "none" | { name: string };

/** A model request, provider-neutral. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** Tools the model may call; absent or empty: none. */
  tools?: ToolDefinition[];
  /** Sent only with tools. */
  toolChoice?: ToolChoice;
  /** Sent only with tools, to providers that take it. */
  parallelToolCalls?: boolean;
  /** The reply must be JSON matching this schema: the provider's native structured output. */
  responseFormat?: ResponseFormat;
}

/** A JSON Schema the reply must match (OpenAI `response_format: json_schema`, Anthropic `output_config.format`). */
export interface ResponseFormat {
  name: string;
  schema: Record<string, unknown>;
  /** OpenAI's strict mode (the schema is in its strict subset). */
  strict: boolean;
}

/**
 * Token counts exactly as a provider reports them, recorded on the llm node as
 * `metadata.usage`. `cachedInputTokens`: input read from the provider's prompt
 * cache; `cacheWriteInputTokens`: input written to it (Anthropic only). The
 * providers count differently: OpenAI's `inputTokens` include the cached ones,
 * Anthropic's exclude both cache reads and writes; `llmNodeUsage` (usage/)
 * puts them on one footing when adding them up.
 */
export interface ReportedUsage {
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
}

/** A provider's answer. */
export interface ModelResponse {
  text: string;
  /** The model that answered, as the provider reports it. */
  model: string;
  /** Token counts as the provider reports them (see `ReportedUsage`). */
  usage?: ReportedUsage;
  /** Why the model stopped ("stop", "length", "end_turn", "tool_calls", ...), as the provider says it. */
  finishReason?: string;
  /** The tool calls the reply asked for, in the model's order (none: a final reply). */
  toolCalls?: ToolCall[];
}

/** Options of one provider call. */
export interface CompleteOptions {
  signal: AbortSignal;
  /** Receives the exact request body (the bytes sent on the wire) before the request goes out. */
  onRequestBody?: (body: string) => void;
  /**
   * Receives each piece of the reply as it streams, in order; the pieces
   * concatenate to the returned `text`. A provider that cannot stream never
   * calls it (the runtime then emits the whole text as one piece).
   */
  onText?: (text: string) => void;
}

/** A model provider: turns a request into a reply, streaming it through `onText` when it can. */
export interface ModelProvider {
  /** "openai", "anthropic", "scripted", ... */
  readonly name: string;
  /** How often the runtime sends a request again after a retryable failure, unless an exec says; absent: never. */
  readonly maxRetries?: number;
  complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse>;
  /**
   * The exact request body `complete` would send for `request`, without
   * sending it. Replay compares its SHA-256 with a recorded llm node's
   * `prompt_sha256`; a provider without it never has its calls replayed.
   */
  requestBody?(request: ModelRequest): string;
  /**
   * A resumed turn answered `count` model calls from the session's own record
   * instead of asking this provider. A replay (ReplayProvider) moves past them
   * in its recording, so the next call meets the recorded call it was; other
   * providers need not implement it.
   */
  skipCalls?(count: number): void;
}
