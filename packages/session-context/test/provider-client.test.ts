// Each HTTP provider keeps one SDK client for all its requests; each request's body hook must still see only the
// bytes that request sent, with requests in flight together, against real loopback servers speaking each protocol.
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicProvider } from "../src/providers/anthropic.js";
import { OpenAIChatProvider } from "../src/providers/openai.js";
import type { ModelProvider } from "../src/providers/types.js";
import {
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type ReceivedRequest,
} from "../src/testing/index.js";

let server: FakeProviderServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/** The question a request carried: the server answers with it, so every reply names its own request. */
function questionOf(request: ReceivedRequest): string {
  const messages = (request.json.messages ?? []) as Array<{ content?: unknown }>;
  const content = messages.at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

async function concurrentRequests(provider: ModelProvider, received: readonly ReceivedRequest[]): Promise<void> {
  const questions = Array.from({ length: 6 }, (_, index) => `question ${index}`);
  const bodies = new Map<string, string[]>();
  const replies = await Promise.all(
    questions.map((question) =>
      provider.complete(
        { model: "model-test", messages: [{ role: "user", content: question }] },
        {
          signal: new AbortController().signal,
          onRequestBody: (body) => bodies.set(question, [...(bodies.get(question) ?? []), body]),
        },
      ),
    ),
  );
  expect(replies.map((reply) => reply.text)).toEqual(questions.map((question) => `answer to ${question}`));
  expect(received).toHaveLength(questions.length);
  for (const request of received) {
    // Each hook saw one body, the very bytes its own request put on the wire.
    expect(bodies.get(questionOf(request))).toEqual([request.body]);
  }
  // A request without a hook goes out all the same.
  const plain = await provider.complete(
    { model: "model-test", messages: [{ role: "user", content: "no hook" }] },
    { signal: new AbortController().signal },
  );
  expect(plain.text).toBe("answer to no hook");
}

describe("one SDK client per provider", () => {
  it("hands each concurrent OpenAI request's hook its own body", async () => {
    const openai = await startFakeOpenAIServer((request) => `answer to ${questionOf(request)}`);
    server = openai;
    const provider = new OpenAIChatProvider({ apiKey: "test-key", baseUrl: openai.baseUrl, maxRetries: 0 });
    await concurrentRequests(provider, openai.requests);
  });

  it("hands each concurrent Anthropic request's hook its own body", async () => {
    const anthropic = await startFakeAnthropicServer();
    server = anthropic;
    anthropic.setHandler((request) => `answer to ${questionOf(request)}`);
    const provider = new AnthropicProvider({ apiKey: "test-key", baseUrl: anthropic.baseUrl, maxRetries: 0 });
    await concurrentRequests(provider, anthropic.requests);
  });
});
