// Property-based bad input for the core (issue 8 section 4): whatever comes in,
// nothing crashes, nothing is written outside the store root, and every
// rejection is a typed error with a code.
import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agenticFunction, InvalidNodeError, OpenProgramError, sessionContext } from "../src/index.js";
import { assertValidSessionId, SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { storeInternals } from "../src/store/internal.js";

let store: TempStore;
beforeAll(async () => {
  store = createTempStore();
  await store.db.createSession({ id: "payloads" });
});
afterAll(() => store.cleanup());

const typed = (error: unknown): boolean => error instanceof OpenProgramError && /^[a-z][a-z0-9_]*$/.test(error.code);

/** Strings that poke at paths: separators, dots, NUL, controls, unicode, lone surrogates, length. */
const hostileString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.stringMatching(/^[./\\a-z0-9_:-]{0,12}$/),
  fc.constantFrom(
    "..",
    ".",
    "../x",
    "a/../b",
    "\0",
    "x\0y",
    "/abs",
    "C:\\win",
    ".git",
    "index.json",
    "INDEX.JSON",
    "index.json.corrupt-1700000000000",
    "-rf",
    "--session",
    "a".repeat(129),
    "é",
    "\ud800",
  ),
  fc.string({ minLength: 120, maxLength: 140 }),
);

describe("session ids", () => {
  it("are accepted exactly when they are safe, and never build a path outside the root", async () => {
    await fc.assert(
      fc.asyncProperty(hostileString, async (sessionId) => {
        let valid = true;
        try {
          assertValidSessionId(sessionId);
        } catch (error) {
          valid = false;
          expect(typed(error)).toBe(true);
          expect((error as OpenProgramError).code).toBe("invalid_session_id");
        }
        expect(valid).toBe(
          /^[A-Za-z0-9_.:-]{1,128}$/.test(sessionId) &&
            !sessionId.startsWith(".") &&
            !sessionId.startsWith("-") &&
            !sessionId.includes("..") &&
            !/^index\.json(\..*)?$/i.test(sessionId),
        );
        const outcome = await store.db.openSession(sessionId).then(
          (result) => ({ ok: true as const, result }),
          (error: unknown) => ({ ok: false as const, error }),
        );
        if (outcome.ok) {
          expect(valid).toBe(true);
          expect(dirname(storeInternals(store.db).paths(sessionId).dir)).toBe(store.root);
        } else {
          expect(typed(outcome.error)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
    // Everything in the store's home is the store root: nothing escaped it.
    expect(readdirSync(store.home)).toEqual(["sessions"]);
  });
});

describe("node payloads", () => {
  const deep = (depth: number): unknown => (depth === 0 ? "leaf" : { next: deep(depth - 1) });

  it("round-trip exactly (as JSON) or are refused with a typed error", async () => {
    const payload = fc.oneof(
      fc.jsonValue(),
      fc.string({ unit: "binary", maxLength: 200 }),
      fc.string({ minLength: 100_000, maxLength: 120_000 }),
      fc.integer({ min: 1, max: 700 }).map(deep),
      fc.anything({
        withBigInt: true,
        withNullPrototype: true,
        withObjectString: true,
        withSparseArray: true,
        withTypedArray: true,
      }),
    );
    await fc.assert(
      fc.asyncProperty(payload, async (value) => {
        const outcome = await store.db
          .appendNode("payloads", { role: "code", name: "p", input: value, caller: "x" })
          .then(
            (node) => ({ ok: true as const, node }),
            (error: unknown) => ({ ok: false as const, error }),
          );
        if (!outcome.ok) {
          expect(typed(outcome.error)).toBe(true);
          return;
        }
        const reloaded = (await new SessionDB({ root: store.root }).loadNodes("payloads")).find(
          (node) => node.id === outcome.node.id,
        );
        expect(reloaded?.input).toEqual(
          JSON.parse(
            JSON.stringify(value ?? null, (_key, item: unknown) => (item === undefined ? undefined : item)) ?? "null",
          ),
        );
      }),
      { numRuns: 150 },
    );
  });

  it("refuses cycles and too-deep values with InvalidNodeError", async () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = cycle;
    await expect(store.db.appendNode("payloads", { role: "code", input: cycle })).rejects.toBeInstanceOf(
      InvalidNodeError,
    );
    await expect(store.db.appendNode("payloads", { role: "code", input: deep(600) })).rejects.toBeInstanceOf(
      InvalidNodeError,
    );
    await expect(store.db.appendNode("payloads", { role: "code", input: 10n })).rejects.toBeInstanceOf(
      InvalidNodeError,
    );
    for (const createdAt of [Number.NaN, -1, 0, Number.POSITIVE_INFINITY]) {
      const refusal = await store.db
        .appendNode("payloads", { role: "llm", createdAt })
        .catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(InvalidNodeError);
      expect((refusal as InvalidNodeError).message).toContain("createdAt");
    }
    // The store is intact after the refusals.
    expect((await new SessionDB({ root: store.root }).readHistory("payloads")).problems).toEqual([]);
  });

  it("agentic functions record any input and output, however strange, without failing the call", async () => {
    const echo = agenticFunction({ name: "echo", doc: "Echo." }, async (input: Record<string, unknown>) => input.value);
    await fc.assert(
      fc.asyncProperty(
        fc.anything({
          withBigInt: true,
          withMap: true,
          withSet: true,
          withDate: true,
          withTypedArray: true,
          withNullPrototype: true,
        }),
        async (value) => {
          const cycle: Record<string, unknown> = { value };
          cycle.self = cycle;
          const result = await sessionContext({ db: store.db, sessionId: "agentic", runtime: null }, () =>
            echo({ value, cycle, fn: () => 1 }),
          );
          expect(result).toBe(value);
        },
      ),
      { numRuns: 60 },
    );
    const nodes = await store.db.loadNodes("agentic");
    expect(nodes.every((node) => node.metadata.status === "completed")).toBe(true);
    expect(JSON.stringify(nodes[0]?.input)).toContain('"self":"<cycle>"');
  });
});
