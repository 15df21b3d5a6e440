// Heavy (run alone by test:heavy): hundreds of concurrent turns, each ending with a git commit.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  currentCallId,
  currentRuntime,
  currentSession,
  currentTurnId,
  sessionContext,
} from "../src/index.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

// Every context is a turn, and every turn ends with a git commit (two git processes): the
// commits, not the contexts, are the cost. 500 contexts over 50 sessions took 62 s with no
// other test of ours running (75 s with every fsync slowed by 1.9 ms, ~3x today's latency)
// against a 60 s timeout. 100 contexts over 20 sessions keep what the test proves (contexts
// interleaving at random points, five turns per session writing at once) at a fifth of the
// commits: 4 s (7 s with slow fsync) on a quiet machine, 21 s with other work loading it
// ~10x (load average 20 on 2 cores).
const CONTEXTS = 100;
const SESSIONS = 20;
const TURNS_PER_SESSION = CONTEXTS / SESSIONS;

describe("isolation", () => {
  it(`keeps ${CONTEXTS} concurrent contexts over ${SESSIONS} sessions apart`, async () => {
    const sessions = Array.from({ length: SESSIONS }, (_, index) => `iso_${index}`);
    const leaf = agenticFunction({ name: "leaf", doc: "Leaf." }, async ({ tag }: { tag: string }, call) => {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
      await store.db.readMeta(call.sessionId);
      return {
        tag,
        session: currentSession().sessionId,
        call: currentCallId(),
        turn: currentTurnId(),
        runtime: currentRuntime(),
      };
    });
    const root = agenticFunction({ name: "root", doc: "Root." }, async ({ tag }: { tag: string }) => {
      const myCall = currentCallId();
      await new Promise((resolve) => setImmediate(resolve));
      const seen = await leaf({ tag });
      return { myCall, seen, after: currentCallId() };
    });
    const runtimes = sessions.map(() => scriptedRuntime([]).runtime);
    const runs = Array.from({ length: CONTEXTS }, (_, index) => {
      const sessionId = sessions[index % SESSIONS] as string;
      const runtime = runtimes[index % SESSIONS];
      const tag = `t${index}`;
      return sessionContext({ db: store.db, sessionId, runtime, turnId: `turn_${index}` }, async () => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        const out = await root({ tag });
        return { index, sessionId, runtime, tag, out, turnAfter: currentTurnId() };
      });
    });
    const results = await Promise.all(runs);
    for (const result of results) {
      expect(result.out.seen.tag).toBe(result.tag);
      expect(result.out.seen.session).toBe(result.sessionId);
      expect(result.out.seen.turn).toBe(`turn_${result.index}`);
      expect(result.turnAfter).toBe(`turn_${result.index}`);
      expect(result.out.seen.runtime).toBe(result.runtime);
      expect(result.out.after).toBe(result.out.myCall);
    }
    for (const sessionId of sessions) {
      const nodes = await store.db.loadNodes(sessionId);
      expect(nodes.length).toBe(2 * TURNS_PER_SESSION);
      const byId = new Map(nodes.map((node) => [node.id, node]));
      for (const node of nodes.filter((candidate) => candidate.name === "leaf")) {
        const parent = byId.get(node.caller);
        expect(parent?.name).toBe("root");
        expect((node.input as { tag: string }).tag).toBe((parent?.input as { tag: string }).tag);
      }
      expect(nodes.map((node) => node.seq)).toEqual(Array.from({ length: 2 * TURNS_PER_SESSION }, (_, index) => index));
    }
  });
});
