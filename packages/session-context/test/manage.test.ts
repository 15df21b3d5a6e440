import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  askUser,
  chat,
  sessionContext,
  SessionNotFoundError,
  type SessionEvent,
  type SessionNode,
} from "../src/index.js";
import { createScriptedAsker } from "../src/entries/host.js";
import { recordAbandonedNodes, relaySessionEvent } from "../src/entries/relay.js";
import { buildCallTree, describeSession, exportSession, sessionCallTree } from "../src/entries/store.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

describe("managing sessions", () => {
  it("describes, trees, exports, logs and deletes what the store holds", async () => {
    const { runtime } = scriptedRuntime(["Hi!", "draft"]);
    const draft = agenticFunction(
      { name: "draft", doc: "Draft it." },
      async (_: { topic: string }, { runtime: rt }) => {
        await askUser("Formal?", { choices: ["yes", "no"] });
        return rt.exec("write");
      },
    );
    const id = await sessionContext(
      { db: store.db, runtime, asker: createScriptedAsker(["yes"]), title: "Demo" },
      async (session) => {
        await chat("Hello");
        await draft({ topic: "x" });
        return session.sessionId;
      },
    );
    const db = store.db;
    expect((await db.getSession(id))?.title).toBe("Demo");
    expect(await db.getSession("nope")).toBeNull();
    expect((await db.listSessions()).map((record) => record.title)).toEqual(["Demo"]);
    const detail = await describeSession(id, { db });
    expect(detail.conversation.map((node) => `${node.role}:${node.name}`)).toEqual([
      "user:",
      "llm:scripted",
      "code:draft",
    ]);
    expect(detail.record.preview).toBe('draft("x")');
    const tree = await sessionCallTree(id, { db });
    expect(tree.map((entry) => entry.node.role)).toEqual(["user", "llm", "code"]);
    expect(tree[2]?.children.map((entry) => entry.node.name)).toEqual(["ask_user", "scripted"]);
    const json = JSON.parse(await exportSession(id, { db, format: "json" })) as {
      nodes: unknown[];
      session: { id: string };
    };
    expect(json.session.id).toBe(id);
    expect(json.nodes).toHaveLength(detail.nodes.length);
    const markdown = await exportSession(id, { db, format: "md" });
    expect(markdown).toContain("# Session");
    // Inputs and answers too: the call with its arguments, the question with what the human said.
    expect(markdown).toContain('- code draft({"topic":"x"}) (completed)');
    expect(markdown).toContain("  - ask_user: Formal? → yes (answered)");
    expect(markdown).toContain('**Call `draft`**\n\nInput:\n\n```json\n{"topic":"x"}\n```\n\nResult:\n\ndraft\n');
    expect((await db.gitLog(id)).length).toBe(2);
    expect(await db.deleteSession(id)).toBe(true);
    await expect(describeSession(id, { db })).rejects.toBeInstanceOf(SessionNotFoundError);
    await expect(sessionCallTree(id, { db })).rejects.toBeInstanceOf(SessionNotFoundError);
  });

  it("exports a failed run with its error: in the header, the conversation and the call tree", async () => {
    const { planTrip } = await import("./programs/fails-in-helper.mjs");
    const program = fileURLToPath(new URL("./programs/fails-in-helper.mjs", import.meta.url));
    const id = await sessionContext({ db: store.db, runtime: null, title: "plan_trip" }, async (session) => {
      await planTrip({ month: "August" }).catch(() => undefined);
      return session.sessionId;
    });
    const markdown = await exportSession(id, { db: store.db, format: "md" });
    expect(markdown).toContain("- failed in `plan_trip`: error [RangeError]: no trips in August\n");
    const error = `error [RangeError]: no trips in August\n  at checkMonth (${program}:5:`;
    expect(markdown).toContain(
      `**Call \`plan_trip\`** (failed)\n\nInput:\n\n\`\`\`json\n{"month":"August"}\n\`\`\`\n\nError:\n\n\`\`\`text\n${error}`,
    );
    expect(markdown).toContain(
      `- code plan_trip({"month":"August"}) (failed)\n  \`\`\`text\n  ${error.replace("\n", "\n  ")}`,
    );
  });

  it("nests orphans at the top instead of dropping them", () => {
    const node = (id: string, caller: string): SessionNode => ({
      id,
      caller,
      seq: 0,
      role: "code",
      name: id,
      input: null,
      output: null,
      created_at: 0,
      predecessor: null,
      reads: [],
      metadata: {},
    });
    const tree = buildCallTree([node("a", ""), node("b", "a"), node("c", "missing")]);
    expect(tree.map((entry) => entry.node.id)).toEqual(["a", "c"]);
  });
});

describe("relaying a child process's work", () => {
  it("relays events to the context's sink and records abandoned nodes as killed", async () => {
    const events: SessionEvent[] = [];
    await sessionContext(
      { db: store.db, createRuntimeIfNone: false, onEvent: (event) => events.push(event) },
      async (session) => {
        const node = await session.db.appendNode(session.sessionId, {
          role: "code",
          name: "child_work",
          metadata: { status: "running" },
        });
        relaySessionEvent({ type: "node", sessionId: session.sessionId, op: "append", node });
        const changed = await recordAbandonedNodes([node.id, "unknown"], "killed");
        expect(changed.map((entry) => entry.metadata.status)).toEqual(["killed"]);
        expect(await recordAbandonedNodes([node.id], "killed")).toEqual([]);
      },
    );
    expect(
      events.map((event) => (event.type === "node" ? `${event.op}:${String(event.node.metadata.status)}` : event.type)),
    ).toEqual(["append:running", "status", "update:killed", "status"]);
  });
});
