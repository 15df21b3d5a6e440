// The store's cache of session views is bounded in bytes, not only in sessions: long replies of idle
// sessions are dropped (and read again from disk when used), the session being worked on stays.
import { afterEach, beforeEach, expect, it } from "vitest";
import { MAX_CACHED_HISTORY_BYTES } from "../src/entries/store.js";
import { storeInternals } from "../src/store/internal.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

const REPLY = "w ".repeat(2 * 1024 * 1024);

it("keeps at most MAX_CACHED_HISTORY_BYTES of idle sessions' nodes, besides the newest view", async () => {
  const internals = storeInternals(store.db);
  const sessions = Math.ceil((2 * MAX_CACHED_HISTORY_BYTES) / REPLY.length);
  for (let index = 0; index < sessions; index++) {
    await store.db.createSession({ id: `s${index}` });
    await store.db.appendNode(`s${index}`, { role: "llm", output: `${index} ${REPLY}` }, { atHead: true });
  }
  expect(internals.cachedHistoryBytes()).toBeLessThanOrEqual(MAX_CACHED_HISTORY_BYTES + REPLY.length + 4096);
  expect(internals.cachedHistoryBytes()).toBeGreaterThan(REPLY.length);
  // A dropped view is read again whole.
  const first = await store.db.loadNodes("s0");
  expect(first.map((node) => String(node.output).slice(0, 4))).toEqual(["0 w "]);
  expect(internals.cachedHistoryBytes()).toBeLessThanOrEqual(MAX_CACHED_HISTORY_BYTES + REPLY.length + 4096);
});
