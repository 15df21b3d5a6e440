import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agenticFunction,
  InvalidInputError,
  InvalidModelOutputError,
  sessionContext,
  type SessionNode,
} from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import {
  createTempStore,
  scriptedRuntime,
  startFakeAnthropicServer,
  startFakeOpenAIServer,
  type FakeProviderServer,
  type TempStore,
} from "../src/testing/index.js";

const Ideas = z.strictObject({ ideas: z.array(z.strictObject({ title: z.string(), risk: z.enum(["low", "high"]) })) });
const IDEAS_DOC = "Propose research ideas for the topic.";
const proposeIdeas = agenticFunction(
  { name: "propose_ideas", doc: IDEAS_DOC },
  async ({ topic }: { topic: string }, { runtime }) => {
    const result = await runtime.exec(`Topic: ${topic}`, { schema: Ideas });
    // Typed from the schema: no cast needed.
    return result.ideas.map((idea) => `${idea.title} (${idea.risk})`);
  },
);

const VALID = JSON.stringify({ ideas: [{ title: "Tide pools", risk: "low" }] });
const INVALID = JSON.stringify({ ideas: [{ title: "Tide pools", risk: "medium" }] });

let store: TempStore;
let server: FakeProviderServer | undefined;
beforeEach(() => {
  store = createTempStore("openprogram-structured-");
});
afterEach(async () => {
  store.cleanup();
  await server?.close();
  server = undefined;
});

describe("runtime.exec with a schema", () => {
  it("resolves to the validated value and records the raw reply and the parsed value", async () => {
    const { runtime, provider } = scriptedRuntime([VALID]);
    const { sessionId, result } = await sessionContext({ db: store.db, runtime }, async (session) => ({
      sessionId: session.sessionId,
      result: await proposeIdeas({ topic: "coasts" }),
    }));
    expect(result).toEqual(["Tide pools (low)"]);
    const llm = (await store.db.loadNodes(sessionId)).find((node) => node.role === "llm") as SessionNode;
    expect(llm.output).toBe(VALID);
    expect(llm.metadata.parsed_output).toEqual({ ideas: [{ title: "Tide pools", risk: "low" }] });
    const body = JSON.parse(provider.requests[0]?.body ?? "{}") as Record<string, unknown>;
    expect(body.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "output",
        strict: true,
        schema: {
          type: "object",
          properties: {
            ideas: {
              type: "array",
              items: {
                type: "object",
                properties: { title: { type: "string" }, risk: { type: "string", enum: ["low", "high"] } },
                required: ["title", "risk"],
                additionalProperties: false,
              },
            },
          },
          required: ["ideas"],
          additionalProperties: false,
        },
      },
    });
  });

  it("sends an invalid reply back with the problem, as its own llm node, and takes the corrected one", async () => {
    const { runtime, provider } = scriptedRuntime(["not json at all", INVALID, VALID]);
    const { sessionId, result } = await sessionContext({ db: store.db, runtime }, async (session) => ({
      sessionId: session.sessionId,
      result: await proposeIdeas({ topic: "coasts" }),
    }));
    expect(result).toEqual(["Tide pools (low)"]);
    expect(provider.requests).toHaveLength(3);
    const second = provider.requests[1]?.request.messages ?? [];
    expect(second.slice(1, 3)).toEqual([
      { role: "user", content: "Topic: coasts" },
      { role: "assistant", content: "not json at all" },
    ]);
    expect(second[3]?.role).toBe("user");
    expect(second[3]?.content).toMatch(
      /^Your reply did not match the required schema: the reply is not JSON \(.+\)\. Reply again/,
    );
    const third = provider.requests[2]?.request.messages ?? [];
    expect(third.at(-2)).toEqual({ role: "assistant", content: INVALID });
    expect(third.at(-1)?.content).toMatch(/^Your reply did not match the required schema: output\.ideas\[0\]\.risk: /);
    const replies = (await store.db.loadNodes(sessionId)).filter((node) => node.role === "llm");
    expect(
      replies.map((node) => [node.metadata.output_error !== undefined, node.metadata.parsed_output !== undefined]),
    ).toEqual([
      [true, false],
      [true, false],
      [false, true],
    ]);
    expect(replies[1]?.metadata.prompt_text).toMatch(/^Your reply did not match/);
  });

  it("fails with InvalidModelOutputError naming the path and the reply once the retries are spent", async () => {
    const { runtime, provider } = scriptedRuntime([INVALID, INVALID]);
    const strict = agenticFunction({ name: "strict_ideas", doc: IDEAS_DOC }, async (_: object, { runtime: model }) =>
      model.exec("Topic: coasts", { schema: Ideas, schemaRetries: 1 }),
    );
    let sessionId = "";
    const failure = await sessionContext({ db: store.db, runtime }, async (session) => {
      sessionId = session.sessionId;
      return strict({});
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(InvalidModelOutputError);
    expect((failure as InvalidModelOutputError).code).toBe("invalid_model_output");
    expect((failure as Error).message).toMatch(/after 2 attempts: output\.ideas\[0\]\.risk: .+Its reply: "\{\\"ideas/);
    expect(provider.requests).toHaveLength(2);
    const call = (await store.db.loadNodes(sessionId)).find((node) => node.name === "strict_ideas");
    expect(call?.metadata.error).toMatchObject({ code: "invalid_model_output" });
  });

  it("validates against a plain JSON Schema too, and refuses a schema that is not an object before sending", async () => {
    const { runtime, provider } = scriptedRuntime(['{"answer": 42}']);
    const plain = agenticFunction({ name: "plain", doc: "Answer." }, async (_: object, { runtime: model }) => {
      await expect(model.exec("Q", { schema: { type: "array" } })).rejects.toThrow(InvalidInputError);
      return model.exec("Q", {
        schema: { type: "object", properties: { answer: { type: "integer" } }, required: ["answer"] },
      });
    });
    expect(await sessionContext({ db: store.db, runtime }, () => plain({}))).toEqual({ answer: 42 });
    expect(provider.requests).toHaveLength(1);
    // Not in OpenAI's strict subset: the schema goes unenforced and the reply is still validated here.
    expect(
      (JSON.parse(provider.requests[0]?.body ?? "{}") as { response_format: { json_schema: { strict: boolean } } })
        .response_format.json_schema.strict,
    ).toBe(false);
  });

  it("uses the native structured output of each provider over the wire", async () => {
    for (const provider of ["openai", "anthropic"] as const) {
      server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(() => VALID);
      const runtime = createRuntime({ provider, apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
      expect(await sessionContext({ db: store.db, runtime }, () => proposeIdeas({ topic: "coasts" }))).toEqual([
        "Tide pools (low)",
      ]);
      const body = server.requests[0]?.json as Record<string, unknown>;
      if (provider === "openai")
        expect(body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "output" } });
      else expect(body.output_config).toMatchObject({ format: { type: "json_schema", schema: { type: "object" } } });
      await server.close();
      server = undefined;
    }
  });

  it("sends exactly the schema, then the invalid reply and the problem, over each provider's wire", async () => {
    const schema = {
      type: "object",
      properties: {
        ideas: {
          type: "array",
          items: {
            type: "object",
            properties: { title: { type: "string" }, risk: { type: "string", enum: ["low", "high"] } },
            required: ["title", "risk"],
            additionalProperties: false,
          },
        },
      },
      required: ["ideas"],
      additionalProperties: false,
    };
    const problem =
      'Your reply did not match the required schema: output.ideas[0].risk: Invalid option: expected one of "low"|"high". ' +
      "Reply again with only the JSON value, matching the schema.";
    for (const provider of ["openai", "anthropic"] as const) {
      let count = 0;
      server = await (provider === "openai" ? startFakeOpenAIServer : startFakeAnthropicServer)(() =>
        count++ === 0 ? INVALID : VALID,
      );
      const runtime = createRuntime({ provider, apiKey: "k", baseUrl: server.baseUrl, model: "m", maxRetries: 0 });
      expect(await sessionContext({ db: store.db, runtime }, () => proposeIdeas({ topic: "coasts" }))).toEqual([
        "Tide pools (low)",
      ]);
      const [first, second] = server.requests.map((request) => request.json as Record<string, unknown>);
      expect(server.requests).toHaveLength(2);
      if (provider === "openai") {
        const format = { type: "json_schema", json_schema: { name: "output", schema, strict: true } };
        expect(first?.response_format).toEqual(format);
        expect(second?.response_format).toEqual(format);
        expect(second?.messages).toEqual([
          { role: "system", content: IDEAS_DOC },
          { role: "user", content: "Topic: coasts" },
          { role: "assistant", content: INVALID },
          { role: "user", content: problem },
        ]);
      } else {
        const format = { format: { type: "json_schema", schema } };
        expect(first?.output_config).toEqual(format);
        expect(second?.output_config).toEqual(format);
        expect(second?.system).toBe(IDEAS_DOC);
        expect(second?.messages).toEqual([
          { role: "user", content: "Topic: coasts" },
          { role: "assistant", content: INVALID },
          { role: "user", content: problem },
        ]);
      }
      await server.close();
      server = undefined;
    }
  });

  it("choices: the reply picks one by name; a pick outside the set is retried; a picked agentic function runs nested", async () => {
    const escalate = agenticFunction(
      { name: "escalate", doc: "Write the escalation note." },
      async (_: object, { runtime: model }) => model.exec("Write it."),
    );
    const { runtime, provider } = scriptedRuntime([
      '{"choice": "panic"}',
      '{"choice": "escalate"}',
      "Paged the on-call engineer.",
    ]);
    const triage = agenticFunction(
      { name: "triage", doc: "Triage the incident." },
      async (_: object, { runtime: model }) =>
        model.exec("The database is down.", { choices: { ignore: "ignored", escalate } }),
    );
    let sessionId = "";
    const result = await sessionContext({ db: store.db, runtime }, async (session) => {
      sessionId = session.sessionId;
      return triage({});
    });
    expect(result).toBe("Paged the on-call engineer.");
    const schema = (
      JSON.parse(provider.requests[0]?.body ?? "{}") as { response_format: { json_schema: { schema: unknown } } }
    ).response_format.json_schema.schema;
    expect(schema).toEqual({
      type: "object",
      properties: { choice: { type: "string", enum: ["ignore", "escalate"] } },
      required: ["choice"],
      additionalProperties: false,
    });
    expect(provider.requests[1]?.request.messages.at(-1)?.content).toMatch(
      /output\.choice: must be equal to one of the allowed values/,
    );
    const nodes = await store.db.loadNodes(sessionId);
    const triageNode = nodes.find((node) => node.name === "triage") as SessionNode;
    expect(nodes.find((node) => node.name === "escalate")?.caller).toBe(triageNode.id);
  });
});
