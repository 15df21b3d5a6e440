import { ProviderError } from "../errors.js";

/**
 * How providers say a request is longer than the model's window. OpenAI:
 * HTTP 400, `code: "context_length_exceeded"`, "This model's maximum context
 * length is N tokens..."; Anthropic: HTTP 400 `invalid_request_error`,
 * "prompt is too long: N tokens > M maximum"; OpenAI-compatible servers
 * (vLLM, llama.cpp, Ollama) use the OpenAI wording or their own.
 */
const OVERFLOW_MESSAGES = [
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /prompt is too long/i,
  /exceeds? (the )?(model'?s? )?context (window|size|length)/i,
  /too many tokens/i,
  /input is too long/i,
];

/** True when a provider refused a request because it does not fit the model's context window. */
export function isContextOverflowError(error: unknown): boolean {
  if (!(error instanceof ProviderError)) return false;
  if (error.status !== null && error.status !== 400 && error.status !== 413) return false;
  const cause = error.cause as { code?: unknown; error?: { code?: unknown } } | undefined;
  if (cause?.code === "context_length_exceeded" || cause?.error?.code === "context_length_exceeded") return true;
  return OVERFLOW_MESSAGES.some((pattern) => pattern.test(error.providerMessage));
}

/** The window a context-length error states ("maximum context length is 8192 tokens", "> 200000 maximum"), or null. */
export function contextLimitFrom(error: unknown): number | null {
  if (!(error instanceof ProviderError)) return null;
  const found =
    /maximum context length is (\d+)/i.exec(error.providerMessage) ??
    /> ?(\d+) maximum/i.exec(error.providerMessage) ??
    /context (?:window|length|size) (?:of|is) (\d+)/i.exec(error.providerMessage);
  const limit = found ? Number(found[1]) : NaN;
  return Number.isInteger(limit) && limit > 0 ? limit : null;
}
