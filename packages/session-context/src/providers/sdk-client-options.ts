/** Connection settings shared by the HTTP providers. */
export interface HttpProviderOptions {
  apiKey: string;
  /** Another endpoint: an OpenAI-compatible server (Ollama, vLLM, llama.cpp), a proxy. */
  baseUrl?: string;
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * The options both official SDKs take, with a fetch hook that hands the exact
 * request body to `onRequestBody` (its SHA-256 is the llm node's
 * prompt_sha256). The providers build a client per request so the hook sees
 * only that request.
 */
export function sdkClientOptions(
  options: HttpProviderOptions,
  onRequestBody: ((body: string) => void) | undefined,
): {
  apiKey: string;
  baseURL?: string;
  maxRetries: number;
  timeout: number;
  logLevel: "off";
  fetch: (url: string | URL | Request, init?: RequestInit) => Promise<Response>;
} {
  return {
    apiKey: options.apiKey,
    ...(options.baseUrl ? { baseURL: options.baseUrl } : {}),
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs ?? 600_000,
    // The SDKs log a malformed stream chunk to the console; we report it as a ProviderError instead.
    logLevel: "off",
    fetch: async (url, init) => {
      if (typeof init?.body === "string") onRequestBody?.(init.body);
      return fetch(url, init);
    },
  };
}
