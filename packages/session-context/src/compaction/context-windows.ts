/**
 * Context windows (input + output tokens) of well-known models, by name
 * prefix; the longest matching prefix wins. A model missing here gets
 * DEFAULT_CONTEXT_WINDOW: set `contextWindow` in the configuration
 * (OPENPROGRAM_CONTEXT_WINDOW, or `contextWindow` in openprogram.config.json)
 * for a local server whose window is smaller, and a provider's
 * context-length error still compacts and retries once.
 */
export const MODEL_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  "gpt-3.5-turbo": 16_385,
  "gpt-4": 8_192,
  "gpt-4-32k": 32_768,
  "gpt-4-turbo": 128_000,
  "gpt-4-1106": 128_000,
  "gpt-4-0125": 128_000,
  "gpt-4o": 128_000,
  "chatgpt-4o": 128_000,
  "gpt-4.1": 1_047_576,
  "gpt-4.5": 128_000,
  "gpt-5": 400_000,
  "gpt-5-chat": 128_000,
  "gpt-oss": 131_072,
  o1: 200_000,
  "o1-mini": 128_000,
  "o1-preview": 128_000,
  o3: 200_000,
  "o3-mini": 200_000,
  "o4-mini": 200_000,
  "claude-": 200_000,
  "llama3.1": 131_072,
  "llama3.2": 131_072,
  "llama3.3": 131_072,
  llama3: 8_192,
  "qwen2.5": 32_768,
  mistral: 32_768,
  scripted: 128_000,
};

/** The window assumed for a model the table does not know. */
export const DEFAULT_CONTEXT_WINDOW = 128_000;

/** The context window of `model`: the override when given, else the table's longest matching prefix. */
export function contextWindowOf(model: string, override?: number | null): number {
  if (typeof override === "number" && Number.isFinite(override) && override > 0) return Math.floor(override);
  const name = model.toLowerCase().replace(/^.*\//, "");
  let best: [string, number] | null = null;
  for (const [prefix, tokens] of Object.entries(MODEL_CONTEXT_WINDOWS)) {
    if (name.startsWith(prefix) && (best === null || prefix.length > best[0].length)) best = [prefix, tokens];
  }
  return best ? best[1] : DEFAULT_CONTEXT_WINDOW;
}
