import * as v from "valibot";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  agenticFunction,
  InvalidInputError,
  sessionContext,
  type AgenticFunction,
  type SessionHandle,
} from "../src/index.js";
import { validateAgenticInput } from "../src/entries/host.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const stores: TempStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.cleanup();
});

const planDay = agenticFunction(
  {
    name: "plan_day",
    doc: "Plan a day out.",
    input: z.object({ town: z.string().min(1), mood: z.enum(["calm", "lively"]), hours: z.number().default(8) }),
  },
  async (input) => `${input.town}, ${input.mood}, ${input.hours}h`,
);

describe("agenticFunction({ input: schema })", () => {
  it("types the input from the schema: what callers pass, and what the body receives", () => {
    expectTypeOf(planDay).toEqualTypeOf<
      AgenticFunction<{ town: string; mood: "calm" | "lively"; hours?: number | undefined }, string>
    >();
  });

  it("gives the body the validated value (defaults applied) and records the input as given", async () => {
    const store = createTempStore("openprogram-schema-");
    stores.push(store);
    const result = await sessionContext({ db: store.db, runtime: null }, async (session) => ({
      value: await planDay({ town: "Lyon", mood: "calm" }),
      session,
    }));
    expect(result.value).toBe("Lyon, calm, 8h");
    const [node] = await store.db.loadNodes(result.session.sessionId);
    expect(node?.input).toEqual({ town: "Lyon", mood: "calm" });
  });

  it("refuses a bad input before anything is recorded, naming each field; the new session is removed", async () => {
    const store = createTempStore("openprogram-schema-");
    stores.push(store);
    let handle: SessionHandle | null = null;
    const error = await sessionContext({ db: store.db, runtime: null }, (session) => {
      handle = session;
      return planDay({ town: "Paris" } as never);
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(
      /^plan_day: input\.mood: Invalid option: expected one of "calm"\|"lively"\.$/,
    );
    expect((handle as unknown as SessionHandle).discarded).toBe(true);
    expect(await store.db.listSessions()).toEqual([]);
  });

  it("records the input's JSON Schema on the declaration (zod 4's converter, through Standard JSON Schema)", () => {
    expect(planDay.agentic.inputSchema).toMatchObject({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        town: { type: "string", minLength: 1 },
        mood: { type: "string", enum: ["calm", "lively"] },
        hours: { type: "number", default: 8 },
      },
      required: ["town", "mood"],
    });
    const plain = agenticFunction({ name: "plain", doc: "No schema." }, async () => null);
    expect(plain.agentic.inputSchema).toBeNull();
  });

  it("validates without running: validateAgenticInput, for entries that check before creating a session", async () => {
    await expect(validateAgenticInput(planDay, { town: "", mood: "calm" })).rejects.toThrow(
      /^plan_day: input\.town: Too small: expected string to have >=1 characters\.$/,
    );
    await expect(validateAgenticInput(planDay, { town: "Oslo", mood: "lively" })).resolves.toEqual({
      town: "Oslo",
      mood: "lively",
      hours: 8,
    });
    const plain = agenticFunction({ name: "plain", doc: "No schema." }, async () => null);
    await expect(validateAgenticInput(plain, { anything: 1 })).resolves.toEqual({ anything: 1 });
  });

  it("works with any Standard Schema library: valibot, with nested paths in the message", async () => {
    const book = agenticFunction(
      { name: "book", doc: "Book rooms.", input: v.object({ rooms: v.array(v.object({ beds: v.number() })) }) },
      async ({ rooms }) => rooms.length,
    );
    await expect(validateAgenticInput(book, { rooms: [{ beds: 2 }, { beds: "two" }] })).rejects.toThrow(
      /^book: input\.rooms\[1\]\.beds: Invalid type: Expected number but received "two"\.$/,
    );
  });

  it("refuses a schema that is not a Standard Schema validator, at declaration", () => {
    expect(() =>
      agenticFunction({ name: "bad", doc: "x", input: { type: "object" } as never }, async () => null),
    ).toThrow(/^agenticFunction\(bad\): input must be a Standard Schema validator/);
  });
});
