import type { ModelProvider } from "../providers/types.js";

/** Per-call options of `runtime.exec`. */
export interface ExecOptions {
  /** Override the runtime's model for this call. */
  model?: string;
  maxTokens?: number;
  temperature?: number;
  /** Cancels this call (the context's signal always applies too). */
  signal?: AbortSignal;
}

/**
 * What agentic functions call the model through. `exec(content)` inside an
 * agentic function sends that function's doc as the system message, the
 * history the call may see, then `content`, and records an llm node.
 */
export interface Runtime {
  readonly provider: ModelProvider;
  /** The model name requests use (and llm nodes are named after). */
  readonly model: string;
  exec(content: string, options?: ExecOptions): Promise<string>;
}
