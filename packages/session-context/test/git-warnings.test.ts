// simple-git 4.1 warned (SIMPLE_GIT_UNLISTED_CONFIG, on stderr, once per key and process) about configuration keys
// outside its known-safe list; a fresh install printed them on every `sessions log`, `doctor`, `prune` and `gc`.
// The store now runs git itself (src/store/git/pinned-git.ts), and every git call it makes must stay silent. Its own file: the warning is once per process and key.
import { afterEach, describe, expect, it } from "vitest";
import { chat, sessionContext } from "../src/index.js";
import { doctorSessions, gcSessions, pruneSessions } from "../src/entries/store.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";
import { gitVersion } from "../src/store/git-repo.js";

let store: TempStore | undefined;
afterEach(() => {
  store?.cleanup();
  store = undefined;
});

describe("the store's git calls", () => {
  it("commit, log, doctor, prune, gc and --version print no warning", async () => {
    const warnings: string[] = [];
    const listener = (warning: Error & { code?: string }): void => {
      warnings.push(`${warning.code ?? warning.name}: ${warning.message}`);
    };
    process.on("warning", listener);
    try {
      store = createTempStore("openprogram-git-warnings-");
      const db = store.db;
      const { runtime } = scriptedRuntime(["one", "two"]);
      const sessionId = await sessionContext({ db, runtime }, async (session) => {
        await chat("first");
        return session.sessionId;
      });
      await sessionContext({ db, runtime, sessionId }, () => chat("second"));
      expect((await db.gitLog(sessionId)).length).toBe(3);
      await doctorSessions({ db, sessionId });
      await pruneSessions({ db, dryRun: true });
      expect((await gcSessions({ db })).sessions).toHaveLength(1);
      expect(await gitVersion()).toMatch(/^git version \d/);
      // process.emitWarning is delivered on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", listener);
    }
    expect(warnings).toEqual([]);
  });
});
