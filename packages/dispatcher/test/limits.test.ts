import { agenticFunction, CancelledError } from "@openprogram/session-context";
import { waitFor } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_TOO_SLOW, MAX_TURNS_PER_CONNECTION, MAX_UNSENT_BYTES } from "../src/index.js";
import { asFrame, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

const hold = agenticFunction(
  { name: "hold", doc: "Waits until cancelled." },
  (_input: Record<string, never>, { signal }) =>
    new Promise<never>((_resolve, reject) => {
      // A stop can land while the call's node is being written, before this body runs.
      if (signal.aborted) reject(new CancelledError(signal.reason));
      else signal.addEventListener("abort", () => reject(new CancelledError(signal.reason)), { once: true });
    }),
);

describe("limits that keep one client from hurting the server", () => {
  it(`refuses more than ${MAX_TURNS_PER_CONNECTION} concurrent turns on one connection with too_many_turns`, async () => {
    const served = await startDispatcher({ runtime: null, programs: { hold } });
    const client = await served.connect();
    for (let index = 0; index < MAX_TURNS_PER_CONNECTION; index++) client.send({ type: "run", program: "hold" });
    for (let index = 0; index < MAX_TURNS_PER_CONNECTION; index++) await client.next("session");
    const refused = await client.refused({ type: "run", program: "hold", client_msg_id: "one-too-many" });
    expect(refused).toMatchObject({ code: "too_many_turns", ref: "one-too-many" });
    expect(await served.store.db.listSessions({ limit: 100 })).toHaveLength(MAX_TURNS_PER_CONNECTION);
    // Another connection is not limited by this one, and a finished turn frees a slot.
    const other = await served.connect();
    other.send({ type: "run", program: "hold" });
    await other.next("session");
    const first = client.frames.find((frame) => frame.type === "session");
    client.send({ type: "stop", session_id: first?.type === "session" ? first.session_id : "" });
    await client.next("turn_failed");
    client.send({ type: "run", program: "hold" });
    await client.next("session");
  });

  it("cuts off a client that stops reading once its unsent frames pass the limit; others carry on", async () => {
    // A large doc makes each `programs` answer large.
    const bulky = agenticFunction({ name: "bulky", doc: "x".repeat(256 * 1024) }, async () => "ok");
    const served = await startDispatcher({ runtime: null, programs: { bulky } });
    const reader = await served.connect();
    const stalled = await served.connect();
    stalled.socket.pause();
    const requests = Math.ceil((4 * MAX_UNSENT_BYTES) / (256 * 1024));
    for (let index = 0; index < requests; index++) stalled.send({ type: "list_programs" });
    await waitFor(
      () => served.logs.some((entry) => entry.event === "client_too_slow"),
      "the stalled client is cut off",
    );
    stalled.socket.resume();
    // Once it reads again it gets what was queued before the cut, then the close frame saying why.
    expect(await stalled.waitClosed()).toEqual({
      code: CLOSE_TOO_SLOW,
      reason: `too slow: more than ${MAX_UNSENT_BYTES} bytes of frames unread`,
    });
    asFrame(await reader.request({ type: "list_programs" }, "programs"), "programs");
  });
});
