/** One chat message as sent to a provider. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** A model request, provider-neutral. */
export interface ModelRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
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
  /** Why the model stopped ("stop", "length", "end_turn", ...), as the provider says it. */
  finishReason?: string;
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
  complete(request: ModelRequest, options: CompleteOptions): Promise<ModelResponse>;
  /**
   * The exact request body `complete` would send for `request`, without
   * sending it. Replay compares its SHA-256 with a recorded llm node's
   * `prompt_sha256`; a provider without it never has its calls replayed.
   */
  requestBody?(request: ModelRequest): string;
}
