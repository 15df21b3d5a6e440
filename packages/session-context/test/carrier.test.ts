import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agenticFunction, currentCallId, currentTurnId, sessionContext } from "../src/index.js";
import { contextCarrierEnv, readContextCarrier } from "../src/entries/relay.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript, runTsChild } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

function childEnv(carrier: Record<string, string>): NodeJS.ProcessEnv {
  // The child gets the carrier and nothing of the parent's own OpenProgram settings.
  return { ...carrier, OPENPROGRAM_HOME: store.home, OPENPROGRAM_PROVIDER: "none" };
}

describe("the context carrier", () => {
  it("lets a child process join the session under the calling node without passing anything explicitly", async () => {
    let parentCall = "";
    let turnId = "";
    const spawnChild = agenticFunction({ name: "spawn_child", doc: "Starts a child process." }, async () => {
      parentCall = currentCallId() as string;
      turnId = currentTurnId();
      const carrier = contextCarrierEnv();
      expect(readContextCarrier(carrier)).toMatchObject({ turnId, callerId: parentCall, sessionsRoot: store.root });
      expect(carrier.TRACEPARENT).toMatch(/^00-[0-9a-f]{32}-0000[0-9a-f]{12}-01$/);
      expect(carrier.TRACEPARENT?.slice(-19, -3)).toBe(`0000${parentCall}`);
      const child = await runTsChild(childScript("join-carrier.ts"), [], childEnv(carrier));
      expect(child.stderr).toBe("");
      return JSON.parse(child.stdout) as { session: string; created: boolean; out: { caller: string } };
    });
    const { sessionId, result } = await sessionContext({ db: store.db, runtime: null }, async (session) => ({
      sessionId: session.sessionId,
      result: await spawnChild({}),
    }));
    expect(result.session).toBe(sessionId);
    expect(result.created).toBe(false);
    const nodes = await store.db.loadNodes(sessionId);
    expect(
      nodes.map((node) => [node.name, node.caller === parentCall ? "under the parent call" : node.caller]),
    ).toEqual([
      ["spawn_child", ""],
      ["child_work", "under the parent call"],
    ]);
    expect(result.out.caller).toBe(nodes[1]?.id);
    // One commit for the turn, made by the parent; the child made none.
    expect((await store.db.gitLog(sessionId)).map((entry) => entry.message)).toEqual([
      `turn ${turnId} (code)`,
      "session init",
    ]);
  });

  it("commits a turn whose only writes happened in the child", async () => {
    const sessionId = await sessionContext({ db: store.db, runtime: null }, async (session) => {
      const child = await runTsChild(childScript("join-carrier.ts"), [], childEnv(contextCarrierEnv()));
      expect(child.stderr).toBe("");
      return session.sessionId;
    });
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.map((node) => [node.name, node.caller, node.predecessor])).toEqual([["child_work", "", "ROOT"]]);
    expect((await store.db.gitLog(sessionId)).length).toBe(2);
    expect((await store.db.getSession(sessionId))?.status).toBe("idle");
  });

  it("is empty outside a context, and an invalid carried id is an error, not ignored", () => {
    expect(contextCarrierEnv()).toEqual({});
    expect(() => readContextCarrier({ OPENPROGRAM_SESSION_ID: "../etc" })).toThrow(/Invalid session id/);
    expect(readContextCarrier({})).toBeNull();
  });
});
