import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agenticFunction, sessionContext } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type TempStore,
} from "../src/testing/index.js";

const Ideas = z.strictObject({ ideas: z.array(z.strictObject({ title: z.string(), risk: z.enum(["low", "high"]) })) });

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-partial-");
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

describe.each(["openai", "anthropic"] as const)("onPartial against %s", (provider) => {
  it("receives the reply's object as it grows, then exec resolves to the validated value", async () => {
    // The rest waits for the first partial: from then on the node is written and every piece passes on as it comes.
    let firstSeen: () => void = () => undefined;
    const first = new Promise<void>((resolve) => (firstSeen = resolve));
    server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(() => ({
      holdAt: { chunk: 1, until: first },
      chunks: [
        '{"ideas": [{"ti',
        'tle": "Tide',
        ' pools", "risk": "l',
        'ow"}, {"title": "Kelp"',
        ', "risk": "high"}]}',
      ],
    }));
    const runtime = createRuntime({ provider, apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
    const partials: unknown[] = [];
    const propose = agenticFunction({ name: "propose", doc: "Propose ideas." }, async (_: object, { runtime: model }) =>
      model.exec("Ideas, please.", { schema: Ideas, onPartial: (partial) => (partials.push(partial), firstSeen()) }),
    );
    const result = await sessionContext({ db: store.db, runtime }, () => propose({}));
    const final = {
      ideas: [
        { title: "Tide pools", risk: "low" },
        { title: "Kelp", risk: "high" },
      ],
    };
    expect(result).toEqual(final);
    expect(partials).toContainEqual({ ideas: [{ title: "Tide" }] });
    expect(partials).toContainEqual({ ideas: [{ title: "Tide pools", risk: "l" }] });
    expect(partials.at(-1)).toEqual(final);
    // Each one passed on differs from the one before.
    const texts = partials.map((partial) => JSON.stringify(partial));
    expect(new Set(texts).size).toBe(texts.length);
  });
});
