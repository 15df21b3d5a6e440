// The branch frames over a real WebSocket (list_branches, checkout,
// name_branch, chat with `from`), over sessions Python OpenProgram wrote.
import { fileURLToPath } from "node:url";
import { createTempStore, scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { asError, asFrame, closeAll, startDispatcher } from "./helpers.js";

afterEach(closeAll);

const V2_FIXTURE = fileURLToPath(
  new URL("../../session-context/test/fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url),
);

async function served(replies: string[] = []) {
  const store = createTempStore("openprogram-dispatcher-branches-", { from: V2_FIXTURE });
  const dispatcher = await startDispatcher({ store, runtime: scriptedRuntime(replies).runtime });
  return { ...dispatcher, client: await dispatcher.connect() };
}

describe("branch frames", () => {
  it("list_branches gives the tips as Python lists them, with the head", async () => {
    const { client } = await served();
    const listed = asFrame(
      await client.request({ type: "list_branches", session_id: "branched_shared", client_msg_id: "b1" }, "branches"),
      "branches",
    );
    expect(listed).toEqual({
      type: "branches",
      session_id: "branched_shared",
      head_id: "ba1bsha",
      client_msg_id: "b1",
      branches: [
        {
          head_id: "ba1sha",
          name: null,
          created_at: 1796094279.4528494,
          updated_at: 1796094279.4528494,
          archived: false,
          active: false,
          trunk: true,
        },
        {
          head_id: "ba1bsha",
          name: "warmer",
          created_at: 1796094266.166028,
          updated_at: 1796094266.166028,
          archived: false,
          active: true,
          trunk: false,
        },
      ],
    });
    expect(asError(await client.request({ type: "list_branches", session_id: "nope" }, "branches")).code).toBe(
      "session_not_found",
    );
  });

  it("checkout moves the head for every subscriber; a summary or an unknown node is refused with its code", async () => {
    const server = await served();
    const client = server.client;
    const watcher = await server.connect();
    await watcher.request({ type: "subscribe", session_id: "branched_shared" }, "subscribed");
    client.send({ type: "checkout", session_id: "branched_shared", node_id: "ba1sha" });
    expect(await client.next("head_moved")).toEqual({
      type: "head_moved",
      session_id: "branched_shared",
      head_id: "ba1sha",
      previous_head_id: "ba1bsha",
    });
    expect(await watcher.next("head_moved")).toMatchObject({ head_id: "ba1sha" });
    expect((await watcher.next("branches")).branches.find((tip) => tip.active)?.head_id).toBe("ba1sha");
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: "branched_shared" }, "session_detail"),
      "session_detail",
    );
    expect(detail.conversation.map((node) => node.output)).toEqual([
      "Suggest a destination",
      "Lisbon.",
      "Somewhere colder",
      "Oslo.",
    ]);
    const summary = await client.refused({
      type: "checkout",
      session_id: "compacted_shared",
      node_id: "summary_3bd8271008",
    });
    expect(summary).toMatchObject({ code: "summary_head", action: "checkout" });
    expect((await client.refused({ type: "checkout", session_id: "branched_shared", node_id: "x" })).code).toBe(
      "node_not_found",
    );
    expect((await client.refused({ type: "checkout", session_id: "branched_shared" })).message).toContain(
      "checkout.node_id is missing",
    );
  });

  it("chat with `from` forks beside the edited message and moves the head; name_branch names the new tip", async () => {
    const { client } = await served(["Marrakesh."]);
    client.send({ type: "chat", session_id: "branched_shared", text: "Somewhere hotter", from: "bu1bsha" });
    expect((await client.next("turn_done")).result).toBe("Marrakesh.");
    const listed = asFrame(
      await client.request({ type: "list_branches", session_id: "branched_shared" }, "branches"),
      "branches",
    );
    expect(listed.branches).toHaveLength(3);
    const active = listed.branches.find((tip) => tip.active);
    expect(active?.head_id).toBe(listed.head_id);
    expect(listed.branches.map((tip) => tip.head_id)).toEqual(expect.arrayContaining(["ba1sha", "ba1bsha"]));
    const named = asFrame(
      await client.request(
        { type: "name_branch", session_id: "branched_shared", head_id: active?.head_id, name: "hotter" },
        "branches",
      ),
      "branches",
    );
    expect(named.branches.find((tip) => tip.active)?.name).toBe("hotter");
    const tooLong = await client.refused({
      type: "name_branch",
      session_id: "branched_shared",
      head_id: "ba1sha",
      name: "x".repeat(81),
    });
    expect(tooLong.code).toBe("invalid_input");
    // The core refuses it before the turn writes anything: the turn fails with the code, the session is unchanged.
    client.send({ type: "chat", session_id: "branched_shared", text: "x", from: "nope" });
    expect((await client.next("turn_failed")).error.code).toBe("node_not_found");
    const after = asFrame(
      await client.request({ type: "list_branches", session_id: "branched_shared" }, "branches"),
      "branches",
    );
    expect(after.head_id).toBe(listed.head_id);
  });
});
