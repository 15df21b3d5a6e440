// The client frames' zod schemas (client-frames.ts) as parse-frame.ts applies them: one schema per action, the
// fields a handler sees, and the first wrong field named with the protocol's wording and the core's codes.
import { describe, expect, it } from "vitest";
import { CLIENT_FRAMES } from "../src/client-frames.js";
import { CLIENT_ACTIONS, parseClientFrame } from "../src/parse-frame.js";

const parse = (frame: unknown) => parseClientFrame(JSON.stringify(frame));

describe("client frames parsed with their schemas", () => {
  it("has one schema per action, each bound to its type", () => {
    expect(CLIENT_ACTIONS).toEqual(Object.keys(CLIENT_FRAMES));
    for (const action of CLIENT_ACTIONS) expect(CLIENT_FRAMES[action].shape.type.safeParse(action).success).toBe(true);
  });

  it("keeps the fields a frame defines, drops unknown ones and optional nulls, and keeps a run's null input", () => {
    expect(parse({ type: "chat", text: "hi", from: null, extra: 1, client_msg_id: "m1" })).toEqual({
      ok: true,
      frame: { type: "chat", text: "hi", client_msg_id: "m1" },
    });
    expect(parse({ type: "run", program: "p", input: null, approve_tools: true })).toEqual({
      ok: true,
      frame: { type: "run", program: "p", input: null, approve_tools: true },
    });
    expect(parse({ type: "run", program: "p" })).toEqual({ ok: true, frame: { type: "run", program: "p" } });
    expect(parse({ type: "list_sessions", limit: 5, include_archived: false })).toEqual({
      ok: true,
      frame: { type: "list_sessions", limit: 5, include_archived: false },
    });
  });

  it("names the first wrong field, in the schema's order, with the protocol's wording and code", () => {
    const refused = (frame: unknown) => {
      const parsed = parse(frame);
      if (parsed.ok) throw new Error("accepted");
      return { code: parsed.error.code, message: parsed.error.message, action: parsed.action };
    };
    expect(refused({ type: "chat", session_id: "../x", text: 5 })).toMatchObject({
      code: "invalid_session_id",
      action: "chat",
    });
    expect(refused({ type: "chat", text: 5, client_msg_id: 7 })).toEqual({
      code: "invalid_input",
      message: "chat.client_msg_id must be a string, not the number 7.",
      action: "chat",
    });
    expect(refused({ type: "get_session", session_id: "s", limit: 0 })).toMatchObject({
      message: "get_session.limit must be an integer from 1 to 5000, not the number 0.",
    });
    expect(refused({ type: "resume", session_id: "s", turn_id: "t".repeat(129) })).toMatchObject({
      message: "resume.turn_id is 129 characters long; at most 128.",
    });
    expect(refused({ type: "name_branch", session_id: "s", head_id: "h" })).toMatchObject({
      message: "name_branch.name is missing; send a string.",
    });
    expect(refused({ type: "chat", text: "x", mcp_servers: ["ok", ""] })).toMatchObject({
      message: 'chat.mcp_servers must hold names (non-empty strings of at most 128 characters), not the string "".',
    });
  });
});
