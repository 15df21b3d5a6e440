import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

describe("50 clients in 50 sessions at once", () => {
  it("each receives only its own session's events, and each session holds only its own nodes", async () => {
    const count = 50;
    const markers = Array.from(
      { length: count },
      (_, index) => `marker-${index}-${Math.random().toString(36).slice(2, 8)}`,
    );
    // Each reply is chosen by the content of its request, so a crossed wire would show.
    const { runtime } = scriptedRuntime(
      markers.map((marker) => ({ reply: `reply for ${marker}`, when: { content: marker } })),
    );
    const served = await startDispatcher({ runtime });
    const clients = await Promise.all(markers.map(() => served.connect()));

    clients.forEach((client, index) => client.send({ type: "chat", text: `message ${markers[index] as string}` }));
    const turns = await Promise.all(
      clients.map(async (client) => {
        const session = await client.next("session");
        const done = await client.next("turn_done");
        return { sessionId: session.session_id, done };
      }),
    );

    expect(new Set(turns.map((turn) => turn.sessionId)).size).toBe(count);
    for (const [index, client] of clients.entries()) {
      const marker = markers[index] as string;
      const { sessionId, done } = turns[index] as (typeof turns)[number];
      expect(done.result).toBe(`reply for ${marker}`);
      const sessionFrames = client.frames.filter((frame) => frame.type !== "hello");
      expect(sessionFrames.length).toBeGreaterThanOrEqual(6);
      for (const frame of sessionFrames) expect("session_id" in frame ? frame.session_id : frame.type).toBe(sessionId);
      const text = JSON.stringify(sessionFrames);
      for (const other of markers) if (other !== marker) expect(text).not.toContain(other);

      const nodes = await served.store.db.loadNodes(sessionId);
      expect(nodes.map((node) => node.output)).toEqual([`message ${marker}`, `reply for ${marker}`]);
      expect((await served.store.db.getSession(sessionId))?.status).toBe("idle");
    }
    expect(await served.store.db.listSessions({ limit: 1000 })).toHaveLength(count);
  });
});
