import { afterEach, describe, expect, it } from "vitest";
import { agenticFunction, askUser, InvalidInputError, sessionContext, type SessionHandle } from "../src/index.js";
import { createRuntime } from "../src/entries/runtime.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const stores: TempStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.cleanup();
});

function tempStore(): TempStore {
  const store = createTempStore("openprogram-refused-");
  stores.push(store);
  return store;
}

const summarize = agenticFunction({ name: "summarize", doc: "Summarize." }, async (_input: object, { runtime }) =>
  runtime.exec("Text: x"),
);
const asksAfterTheModel = agenticFunction({ name: "asks_late", doc: "Plan." }, async (_input: object, { runtime }) => {
  const plan = await runtime.exec("Plan it.");
  return `${plan} / ${await askUser("Go?")}`;
});

/** Runs fn in a new session of `store`; resolves to the handle and the error it failed with. */
async function refusedRun(
  store: TempStore,
  options: Parameters<typeof sessionContext>[0],
  fn: () => Promise<unknown>,
): Promise<{ handle: SessionHandle; error: unknown }> {
  let handle: SessionHandle | null = null;
  const error = await sessionContext({ db: store.db, ...options }, (entered) => {
    handle = entered;
    return fn();
  }).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).not.toBeNull();
  return { handle: handle as unknown as SessionHandle, error };
}

describe("a refused run leaves no session", () => {
  it.each([
    ["no provider", "runtime_missing", { runtime: null }, () => summarize({})],
    [
      "no asker",
      "ask_user_unavailable",
      { runtime: createRuntime({ provider: "scripted", script: [] }) },
      () => askUser("Which one?"),
    ],
    [
      "input refused by the program",
      "invalid_input",
      { runtime: null },
      () => Promise.reject(new InvalidInputError("task is required")),
    ],
  ] as const)(
    "%s (%s): the session it created is deleted, and the handle says so",
    async (_name, code, options, fn) => {
      const store = tempStore();
      const { handle, error } = await refusedRun(store, options, fn);
      expect((error as { code: string }).code).toBe(code);
      expect(handle.created).toBe(true);
      expect(handle.discarded).toBe(true);
      expect(await store.db.getSession(handle.sessionId)).toBeNull();
      expect(await store.db.listSessions()).toEqual([]);
    },
  );

  it("keeps it once a model reply was recorded (resumable, and it cost money)", async () => {
    const store = tempStore();
    const runtime = createRuntime({ provider: "scripted", script: ["a plan"] });
    const { handle, error } = await refusedRun(store, { runtime }, () => asksAfterTheModel({}));
    expect((error as { code: string }).code).toBe("ask_user_unavailable");
    expect(handle.discarded).toBe(false);
    expect((await store.db.loadNodes(handle.sessionId)).map((node) => node.metadata.status)).toEqual([
      "failed",
      "completed",
      "failed",
    ]);
  });

  it("keeps it once the human answered a question: the answer is there for resume (no provider asked after it)", async () => {
    const store = tempStore();
    const asksFirst = agenticFunction({ name: "asks_first", doc: "Write." }, async (_input: object, { runtime }) => {
      const reader = await askUser("Who for?");
      return runtime.exec(`Reader: ${reader}`);
    });
    const { handle, error } = await refusedRun(
      store,
      { runtime: null, asker: { ask: async () => ({ kind: "answer", value: "experts" }) } },
      () => asksFirst({}),
    );
    expect((error as { code: string }).code).toBe("runtime_missing");
    expect(handle.discarded).toBe(false);
    const nodes = await store.db.loadNodes(handle.sessionId);
    expect(nodes.find((node) => node.name === "ask_user")).toMatchObject({
      output: "experts",
      metadata: { status: "answered" },
    });
  });

  it("keeps a session it continued, and a session whose turn failed for another reason", async () => {
    const store = tempStore();
    await sessionContext({ db: store.db, sessionId: "kept", runtime: null }, async () => "first turn");
    const continued = await refusedRun(store, { sessionId: "kept", runtime: null }, () => summarize({}));
    expect(continued.handle).toMatchObject({ created: false, discarded: false });
    const failed = await refusedRun(store, { runtime: null }, () => Promise.reject(new TypeError("a bug")));
    expect(failed.handle).toMatchObject({ created: true, discarded: false });
    expect((await store.db.listSessions()).map((record) => record.id).sort()).toEqual(
      ["kept", failed.handle.sessionId].sort(),
    );
  });
});
