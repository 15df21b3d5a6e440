// The server frames' schemas (src/server-frames.ts) against what a real dispatcher sends over a real WebSocket on
// loopback: a session taken through every kind of frame, each frame parsed with its schema, so the schemas and the
// server cannot drift apart. (Every TestClient checks every frame it receives too; this test makes sure each kind
// is met at least once.)
import { fileURLToPath } from "node:url";
import { agenticFunction, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkServerFrame, SERVER_FRAMES, type ServerFrameType } from "../src/server-frames.js";
import { asFrame, closeAll, onCleanup, startDispatcher } from "./helpers.js";
import { planDay, toolModel } from "./tool-program.js";

const NOTES_SERVER = fileURLToPath(new URL("../../mcp/test/servers/notes-server.mjs", import.meta.url));

const fails = agenticFunction({ name: "fails", doc: "Always fails." }, () => {
  throw new TypeError("no such trip");
});

let fake: FakeOpenAIServer;
beforeEach(async () => {
  fake = await startFakeOpenAIServer();
  onCleanup(() => fake.close());
});
afterEach(closeAll);

/** Kinds only a cluster sends (a replica's event channel was down): met by test/cluster/replicas.test.ts's clients. */
const CLUSTER_ONLY: ServerFrameType[] = ["resync"];

describe("server frames", () => {
  it("every kind the server sends parses with its schema, as sent over a real WebSocket", async () => {
    const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "m", maxRetries: 1 }) as Runtime;
    const served = await startDispatcher({
      runtime,
      programs: { plan_day: planDay, fails },
      budgets: { turn: { tokens: 100_000 }, session: { tokens: 1_000_000 } },
      mcpServers: { notes: { command: process.execPath, args: [NOTES_SERVER], allow: ["add"] } },
    });
    const client = await served.connect();

    // A chat whose first request is refused (retry), then one streamed to a subscriber (delta, status).
    fake.setHandler((_request, index) =>
      index === 0 ? { status: 429, message: "slow down", type: "rate_limit_error", retryAfter: "0" } : "Hello.",
    );
    client.send({ type: "chat", text: "Plan my day.", client_msg_id: "m1" });
    const { session_id: sessionId } = await client.next("turn_done");
    asFrame(await client.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    fake.setHandler(() => ({ chunks: ["One, ", "two, ", "three."], chunkDelayMs: 40 }));
    client.send({ type: "chat", session_id: sessionId, text: "Count to three." });
    await client.next("turn_done");
    await client.next("delta");
    await client.next("status");

    // Tools, with the approval asked as a question and answered; a program that fails.
    fake.setHandler(toolModel);
    client.send({ type: "run", program: "plan_day", input: {}, session_id: sessionId });
    const question = await client.next("question");
    client.send({ type: "answer", question_id: question.question_id, value: "yes" });
    await client.next("question_closed");
    await client.next("turn_done");
    await client.next("tool_result");
    client.send({ type: "run", program: "fails", input: {}, session_id: sessionId, client_msg_id: "f1" });
    await client.next("turn_failed");

    // The answers to reading frames.
    asFrame(await client.request({ type: "list_sessions", include_archived: true }, "sessions"), "sessions");
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: sessionId }, "session_detail"),
      "session_detail",
    );
    expect(detail.budgets?.standings.length).toBe(2);
    asFrame(await client.request({ type: "get_calls", session_id: sessionId }, "calls"), "calls");
    asFrame(await client.request({ type: "list_programs" }, "programs"), "programs");
    const servers = asFrame(await client.request({ type: "list_mcp_servers" }, "mcp_servers"), "mcp_servers");
    expect(servers.servers.map((server) => server.name)).toEqual(["notes"]);

    // Branches: move the head back to the first reply.
    const branches = asFrame(
      await client.request({ type: "list_branches", session_id: sessionId, client_msg_id: "b1" }, "branches"),
      "branches",
    );
    const firstReply = detail.conversation.find((node) => node.role === "llm") as { id: string };
    expect(branches.head_id).not.toBe(firstReply.id);
    client.send({ type: "checkout", session_id: sessionId, node_id: firstReply.id });
    await client.next("head_moved");

    // A compaction asked for, then archive, unsubscribe, delete, and a frame the server refuses.
    fake.setHandler(() => "The user asked for a plan; the model counted to three.");
    asFrame(
      await client.request({ type: "compact", session_id: sessionId, keep_recent_tokens: 0 }, "compacted"),
      "compacted",
    );
    await client.next("compaction");
    asFrame(
      await client.request({ type: "archive_session", session_id: sessionId }, "session_archived"),
      "session_archived",
    );
    asFrame(await client.request({ type: "unsubscribe", session_id: sessionId }, "unsubscribed"), "unsubscribed");
    asFrame(
      await client.request({ type: "delete_session", session_id: sessionId }, "session_deleted"),
      "session_deleted",
    );
    expect((await client.refused({ type: "no_such_action", client_msg_id: "e1" })).code).toBe("unknown_action");

    const problems = client.frames.flatMap((frame) => {
      const checked = checkServerFrame(frame);
      return checked.ok ? [] : [checked.problem];
    });
    expect(problems).toEqual([]);
    const seen = new Set(client.frames.map((frame) => frame.type));
    const expected = Object.keys(SERVER_FRAMES).filter((type) => !CLUSTER_ONLY.includes(type as ServerFrameType));
    expect(expected.filter((type) => !seen.has(type as ServerFrameType))).toEqual([]);
  });

  it("a schema refuses a field the server does not send, a missing field, and a field of the wrong kind", () => {
    const hello = { type: "hello", protocol_version: 1, server: "openprogram-dispatcher", version: "0.1.0" };
    expect(checkServerFrame(hello)).toEqual({ ok: true, frame: hello });
    for (const wrong of [
      { ...hello, extra: true },
      { ...hello, version: undefined },
      { ...hello, protocol_version: "1" },
      { type: "compaction", phase: "started" },
      { type: "no_such_frame" },
    ]) {
      const checked = checkServerFrame(wrong);
      expect(checked.ok, JSON.stringify(wrong)).toBe(false);
    }
  });
});
