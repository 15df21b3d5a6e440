// Bad input, systematically (issue 8 section 4), over WebSocket frames: no
// frame crashes the server or closes the connection, nothing is written
// outside the sessions root, and every rejection is an error frame with a code.
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createDispatcher, type Dispatcher } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { agenticFunction } from "@openprogram/session-context";
import { isValidSessionId, SessionDB } from "@openprogram/session-context/store";
import { removeTree, scriptedRuntime, waitFor } from "@openprogram/session-context/testing";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";

const home = mkdtempSync(join(tmpdir(), "openprogram-frames-"));
const root = join(home, "sessions");
let dispatcher: Dispatcher;
let client: TestClient;

const echo = agenticFunction(
  { name: "echo", doc: "Return the input." },
  async (input: Record<string, unknown>) => input,
);

beforeAll(async () => {
  dispatcher = await createDispatcher({
    db: new SessionDB({ root }),
    runtime: scriptedRuntime(Array.from({ length: 10_000 }, (_, index) => `reply ${index}`)).runtime,
    port: 0,
    programs: { echo },
  });
  client = await TestClient.connect(dispatcher.wsUrl, { headers: { origin: dispatcher.url } });
});
afterAll(async () => {
  client.close();
  await dispatcher.close();
  removeTree(home);
});

/** Every frame received, read field by field. */
const inbox = (): Array<Record<string, unknown>> => client.frames;

/** Waits for a frame matching `match` that arrived after position `from` of the inbox. */
async function frameAfter(
  from: number,
  match: (frame: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  await waitFor(() => inbox().slice(from).some(match), "an answer to list_sessions", 30_000, 2);
  return inbox().slice(from).find(match) as Record<string, unknown>;
}

const TYPES = [
  "chat",
  "run",
  "answer",
  "decline",
  "stop",
  "subscribe",
  "unsubscribe",
  "list_sessions",
  "get_session",
  "delete_session",
  "list_programs",
  "list_branches",
  "checkout",
  "name_branch",
];
const hostile = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.constantFrom(
    "..",
    "../../etc",
    "/tmp/x",
    "a/b",
    "\0",
    "",
    "x".repeat(200),
    "echo",
    "session_0000000000",
    "__proto__",
    "constructor",
  ),
);
const frames = fc.oneof(
  // Valid turns too, so that sessions are really created while the bad input flows.
  fc.string({ minLength: 1, maxLength: 30 }).map((text) => JSON.stringify({ type: "chat", text })),
  fc.jsonValue({ maxDepth: 2 }).map((input) => JSON.stringify({ type: "run", program: "echo", input })),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc
    .record(
      {
        type: fc.oneof(fc.constantFrom(...TYPES), hostile),
        session_id: fc.oneof(hostile, fc.anything({ maxDepth: 1 })),
        text: fc.oneof(fc.string({ maxLength: 40 }), fc.anything({ maxDepth: 1 })),
        program: fc.oneof(fc.constant("echo"), hostile),
        input: fc.anything({ maxDepth: 2 }),
        question_id: hostile,
        value: fc.anything({ maxDepth: 1 }),
        limit: fc.oneof(fc.integer(), fc.string()),
        // The branch frames' fields (and chat's edit-and-resend `from`).
        node_id: hostile,
        head_id: hostile,
        name: fc.oneof(fc.string({ maxLength: 100 }), fc.anything({ maxDepth: 1 })),
        from: fc.oneof(hostile, fc.anything({ maxDepth: 1 })),
        client_msg_id: fc.anything({ maxDepth: 1 }),
      },
      { requiredKeys: [] },
    )
    .map((frame) => JSON.stringify(frame)),
);

describe("random WebSocket frames", () => {
  it("never crash the server or close the connection; rejections are error frames with a code", async () => {
    await fc.assert(
      fc.asyncProperty(frames, async (text) => {
        const from = inbox().length;
        client.send(text);
        // A list_sessions after every frame proves the connection is still usable.
        client.send({ type: "list_sessions", limit: 1 });
        await frameAfter(from, (frame) => frame.type === "sessions");
        for (const frame of inbox().slice(from)) {
          expect(typeof frame.type).toBe("string");
          if (frame.type === "error" || frame.type === "turn_failed") {
            const error = (frame.type === "error" ? frame : frame.error) as { code?: unknown; message?: unknown };
            expect(error.code).toMatch(/^[a-z][a-z0-9_]*$/);
            expect(typeof error.message).toBe("string");
          }
        }
        expect(client.socket.readyState).toBe(WebSocket.OPEN);
      }),
      { numRuns: 300 },
    );
    // Let any turns the frames started finish, then look at what is on disk.
    const from = inbox().length;
    client.send({ type: "list_sessions" });
    const listed = (await frameAfter(from, (frame) => frame.type === "sessions")).sessions as Array<{ id: string }>;
    const health = await fetch(`${dispatcher.url}/healthz`);
    expect(health.status).toBe(200);
    // Turns ran (sessions exist), and nothing was written beside the sessions root.
    expect(listed.length).toBeGreaterThan(0);
    expect(readdirSync(home)).toEqual(["sessions"]);
    for (const name of readdirSync(root).filter((entry) => !entry.startsWith(".") && entry !== "index.json"))
      expect(isValidSessionId(name)).toBe(true);
    for (const session of listed) expect(isValidSessionId(session.id)).toBe(true);
  });
});
