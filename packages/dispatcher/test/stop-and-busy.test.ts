import { agenticFunction } from "@openprogram/session-context";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asError, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

/** A program whose model call takes a minute: long enough to stop it or to collide with it. */
const slowThink = agenticFunction(
  { name: "slow_think", doc: "Think slowly." },
  async (_: Record<string, never>, { runtime }) => runtime.exec("think"),
);

function slowDispatcher() {
  const { runtime } = scriptedRuntime([
    { reply: "slow", delayMs: 60_000, when: { content: "think" } },
    "fast 1",
    "fast 2",
  ]);
  return startDispatcher({ runtime, programs: { slow_think: slowThink } });
}

describe("stop", () => {
  it("cancels the running turn through its signal: nodes cancelled, turn committed, session idle", async () => {
    const served = await slowDispatcher();
    const client = await served.connect();
    client.send({ type: "run", program: "slow_think" });
    const session = await client.next("session");
    await client.next("node", (frame) => frame.node.role === "code");
    client.send({ type: "stop", session_id: session.session_id });
    const failed = await client.next("turn_failed");
    expect(failed.error.code).toBe("cancelled");
    expect(failed.error.message).toContain("stopped by a client");
    const nodes = await served.store.db.loadNodes(session.session_id);
    expect(nodes.find((node) => node.role === "code")?.metadata.status).toBe("cancelled");
    expect(nodes.find((node) => node.role === "llm")?.metadata.status).toBe("cancelled");
    expect((await served.store.db.getSession(session.session_id))?.status).toBe("idle");
    expect((await served.store.db.gitLog(session.session_id))[0]?.message).toBe(`turn ${session.turn_id} (web)`);
    expect(served.logs.some((entry) => entry.event === "turn_end" && entry.outcome === "cancelled")).toBe(true);
  });

  it("stop of a session with no running turn is an error naming it", async () => {
    const served = await slowDispatcher();
    const client = await served.connect();
    const answer = await client.refused({ type: "stop", session_id: "session_0000000000" });
    expect(answer).toMatchObject({ code: "no_running_turn", action: "stop" });
  });
});

describe("session_busy", () => {
  it("refuses a second turn on a busy session, keeps other sessions working, and refuses deleting it", async () => {
    const served = await slowDispatcher();
    const first = await served.connect();
    const second = await served.connect();
    first.send({ type: "run", program: "slow_think" });
    const session = await first.next("session");
    const sessionId = session.session_id;

    const busy = asError(
      await second.request({ type: "chat", session_id: sessionId, text: "me too", client_msg_id: "b1" }, "session"),
    );
    expect(busy).toMatchObject({ code: "session_busy", ref: "b1", action: "chat" });
    expect(busy.message).toContain(sessionId);
    const busyRun = asError(
      await first.request({ type: "run", session_id: sessionId, program: "slow_think" }, "session"),
    );
    expect(busyRun.code).toBe("session_busy");
    const busyDelete = asError(
      await second.request({ type: "delete_session", session_id: sessionId }, "session_deleted"),
    );
    expect(busyDelete).toMatchObject({ code: "session_busy", action: "delete_session" });

    // Another session is unaffected.
    second.send({ type: "chat", text: "other session" });
    const other = await second.next("turn_done");
    expect(other.session_id).not.toBe(sessionId);
    expect(other.result).toBe("fast 1");

    first.send({ type: "stop", session_id: sessionId });
    await first.next("turn_failed");
    // Free again: the next turn runs.
    first.send({ type: "chat", session_id: sessionId, text: "now" });
    expect((await first.next("turn_done")).result).toBe("fast 2");
  });
});
