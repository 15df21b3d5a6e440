import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { storeInternals } from "../src/store/internal.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

// index.json is read off the event loop's thread (a listing reads all of it); a change of this process that reaches
// the file while such a read is under way must still be seen by that read.
describe("reading the registry while this process's queued changes are written", () => {
  let store: TempStore;

  beforeEach(() => {
    store = createTempStore("openprogram-registry-read-");
  });

  afterEach(() => {
    store.cleanup();
  });

  it("sees a queued change that a flush wrote during the read", async () => {
    const { db } = store;
    await db.createSession({ id: "s" });
    await db.flushRegistry();
    for (const status of ["running", "idle", "needs_input", "idle", "running"] as const) {
      await db.setStatus("s", status);
      const reading = db.getSession("s");
      const listing = db.listSessions();
      // Synchronous: the change leaves the queue for index.json while both reads wait for their bytes.
      storeInternals(db).flushRegistrySync();
      expect((await reading)?.status).toBe(status);
      expect((await listing).map((record) => record.status)).toEqual([status]);
    }
  });
});
