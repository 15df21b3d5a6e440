/** Connection settings shared by the HTTP providers. */
export interface HttpProviderOptions {
  apiKey: string;
  /** Another endpoint: an OpenAI-compatible server (Ollama, vLLM, llama.cpp), a proxy. */
  baseUrl?: string;
  /** One request's timeout (the SDK's); an exec's `timeoutMs` bounds the whole call. */
  timeoutMs?: number;
  /** Retries of a failed request (the runtime retries, not the SDK: each retry is a `retry` event); default 2. */
  maxRetries?: number;
}

/** Where a request's body hook rides in the SDK's per-request fetch options (never sent: the fetch takes it out). */
const BODY_HOOK = Symbol("openprogram.onRequestBody");

type FetchInit = RequestInit & { [BODY_HOOK]?: (body: string) => void };

/**
 * The options both official SDKs take, with a fetch that hands each request's exact body to that request's own
 * hook (its SHA-256 is the llm node's prompt_sha256; see requestBodyHook). One client per provider serves every
 * request: building one per request cost about 0.15 ms of each request's preparation in the tool loop.
 */
export function sdkClientOptions(options: HttpProviderOptions): {
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
    // The runtime retries (ModelCall.send), with events and within the exec's deadline; the SDK must not as well.
    maxRetries: 0,
    timeout: options.timeoutMs ?? 600_000,
    // The SDKs log a malformed stream chunk to the console; we report it as a ProviderError instead.
    logLevel: "off",
    fetch: async (url, init?: FetchInit) => {
      if (!init || !(BODY_HOOK in init)) return fetch(url, init);
      const { [BODY_HOOK]: onRequestBody, ...rest } = init;
      if (typeof rest.body === "string") onRequestBody?.(rest.body);
      return fetch(url, rest);
    },
  };
}

/**
 * The per-request fetch options that carry `onRequestBody` to the client's fetch: both SDKs spread a request's
 * `fetchOptions` into the init they hand to fetch, own symbol keys included.
 */
export function requestBodyHook(onRequestBody: ((body: string) => void) | undefined): Record<never, never> {
  return onRequestBody ? { [BODY_HOOK]: onRequestBody } : {};
}
