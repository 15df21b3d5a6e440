import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_FRAME_BYTES } from "../src/index.js";
import { asFrame, closeAll, startDispatcher, type TestClient } from "./helpers.js";

afterEach(closeAll);

/** After every bad frame the same connection still answers. */
async function stillUsable(client: TestClient): Promise<void> {
  asFrame(await client.request({ type: "list_programs" }, "programs"), "programs");
}

describe("bad input gets an error frame naming the problem, and the connection stays usable", () => {
  const cases: Array<{ name: string; frame: string | Record<string, unknown>; code: string; says: string }> = [
    { name: "malformed JSON", frame: '{"type": "chat", "text": ', code: "invalid_input", says: "not valid JSON" },
    { name: "a JSON array", frame: "[1,2]", code: "invalid_input", says: "must be a JSON object" },
    { name: "a JSON string", frame: '"chat"', code: "invalid_input", says: "must be a JSON object" },
    { name: "no type", frame: { text: "hi" }, code: "invalid_input", says: 'no "type"' },
    { name: "a mistyped type", frame: { type: 7 }, code: "invalid_input", says: '"type" must be a string' },
    {
      name: "an unknown action",
      frame: { type: "exec_module", module: "/etc/passwd" },
      code: "unknown_action",
      says: "exec_module",
    },
    { name: "a missing field", frame: { type: "chat" }, code: "invalid_input", says: "chat.text is missing" },
    {
      name: "a mistyped field",
      frame: { type: "chat", text: 42 },
      code: "invalid_input",
      says: "chat.text must be a string, not the number 42",
    },
    { name: "an empty text", frame: { type: "chat", text: "   " }, code: "invalid_input", says: "chat.text is empty" },
    {
      name: "a mistyped program",
      frame: { type: "run", program: ["x"] },
      code: "invalid_input",
      says: "run.program must be a string, not an array",
    },
    {
      name: "a missing session id",
      frame: { type: "stop" },
      code: "invalid_input",
      says: "stop.session_id is missing",
    },
    {
      name: "a mistyped answer",
      frame: { type: "answer", question_id: "q", value: 2 },
      code: "invalid_input",
      says: "answer.value must be a string",
    },
    {
      name: "a bad limit",
      frame: { type: "list_sessions", limit: -3 },
      code: "invalid_input",
      says: "list_sessions.limit must be an integer",
    },
    {
      name: "a session id with '..'",
      frame: { type: "chat", session_id: "../../etc", text: "x" },
      code: "invalid_session_id",
      says: "contains '/'",
    },
    {
      name: "a session id with a slash",
      frame: { type: "subscribe", session_id: "a/b" },
      code: "invalid_session_id",
      says: "contains '/'",
    },
    {
      name: "a session id '..'",
      frame: { type: "get_session", session_id: ".." },
      code: "invalid_session_id",
      says: "contains '..'",
    },
    {
      name: "a hidden session id",
      frame: { type: "delete_session", session_id: ".git" },
      code: "invalid_session_id",
      says: "starts with '.'",
    },
    {
      name: "a non-string session id",
      frame: { type: "run", session_id: 5, program: "x" },
      code: "invalid_session_id",
      says: "not a string",
    },
    {
      name: "an overlong session id",
      frame: { type: "chat", session_id: "a".repeat(300), text: "x" },
      code: "invalid_session_id",
      says: "at most 128",
    },
  ];

  it.each(cases)("$name", async ({ frame, code, says }) => {
    const served = await startDispatcher({ runtime: scriptedRuntime([]).runtime });
    const client = await served.connect();
    const error = await client.refused(frame);
    expect(error.code).toBe(code);
    expect(error.message).toContain(says);
    await stillUsable(client);
  });

  it("echoes client_msg_id as ref and the action, even when the frame is wrong", async () => {
    const served = await startDispatcher({ runtime: null });
    const client = await served.connect();
    expect(await client.refused({ type: "chat", text: 1, client_msg_id: "ref-9" })).toMatchObject({
      ref: "ref-9",
      action: "chat",
      code: "invalid_input",
    });
  });

  it("refuses binary frames", async () => {
    const served = await startDispatcher({ runtime: null });
    const client = await served.connect();
    client.socket.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await client.next("error")).message).toContain("Binary frames");
    await stillUsable(client);
  });

  it("refuses frames over 1 MiB with close code 1009; frames under it work; the server keeps serving", async () => {
    const served = await startDispatcher({ runtime: null });
    const client = await served.connect();
    const padding = "x".repeat(MAX_FRAME_BYTES - 100);
    asFrame(await client.request({ type: "list_programs", padding }, "programs"), "programs");
    client.send({ type: "chat", text: "x".repeat(MAX_FRAME_BYTES + 1) });
    expect((await client.waitClosed()).code).toBe(1009);
    expect(
      served.logs.some(
        (entry) => entry.event === "connection_error" && entry.error_code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH",
      ),
    ).toBe(true);
    const another = await served.connect();
    await stillUsable(another);
  });

  it("writes nothing outside the sessions root whatever ids a client sends", async () => {
    const served = await startDispatcher({ runtime: scriptedRuntime(["ok"]).runtime });
    const client = await served.connect();
    const hostile = [
      "../escape",
      "..",
      "/tmp/abs",
      "a\\b",
      ".hidden",
      "x/../../y",
      "nul\u0000byte",
      "~/home",
      "$(touch pwned)",
    ];
    for (const sessionId of hostile) {
      for (const type of ["chat", "subscribe", "get_session", "delete_session", "stop"]) {
        const answer = await client.refused({ type, session_id: sessionId, text: "hi" });
        expect(answer).toMatchObject({ code: "invalid_session_id", action: type });
      }
    }
    // URL-encoded dots are just characters: a session directory inside the root, nothing else.
    client.send({ type: "chat", session_id: "%2e%2e", text: "hi" });
    expect(await client.next(["error", "turn_done"])).toMatchObject({ type: "error", code: "invalid_session_id" });
    client.send({ type: "chat", session_id: "dots.in.the.middle", text: "hi" });
    expect(await client.next(["error", "turn_done"])).toMatchObject({
      type: "turn_done",
      session_id: "dots.in.the.middle",
    });
    // index.json, a cache of the sessions, is written shortly after the turn (the core's registry.ts).
    await served.store.db.flushRegistry();
    const home = dirname(served.store.root);
    expect(readdirSync(home)).toEqual(["sessions"]);
    expect(readdirSync(served.store.root).filter((name) => !name.startsWith("."))).toEqual([
      "dots.in.the.middle",
      "index.json",
    ]);
  });
});
