import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { dumpsPython } from "../src/json/python-json.js";
import { createTempStore, PYTHON_SESSIONS_FIXTURE } from "../src/testing/index.js";
import { git } from "./helpers.js";

const NODE_FIELDS = [
  "id",
  "created_at",
  "seq",
  "role",
  "name",
  "input",
  "output",
  "caller",
  "predecessor",
  "reads",
  "metadata",
];
const META_FIELDS = ["id", "agent_id", "title", "source", "created_at", "updated_at", "project_id", "head_id"];

describe("the store reads and writes the Python OpenProgram layout", () => {
  let cleanup = (): void => undefined;
  afterEach(() => cleanup());

  function open(): { db: SessionDB; root: string } {
    const fixture = createTempStore("openprogram-fixture-", { from: PYTHON_SESSIONS_FIXTURE });
    cleanup = () => fixture.cleanup();
    return { db: new SessionDB({ root: fixture.root }), root: fixture.root };
  }

  it("lists both sessions with their titles, newest first", async () => {
    const { db } = open();
    const sessions = await db.listSessions();
    expect(sessions.map((session) => [session.id, session.title, session.source])).toEqual([
      ["research_shared", "", "cli"],
      ["chat_shared", "Weekend plan", "web"],
    ]);
    expect(sessions[1]?.preview).toBe("Make it cheaper");
  });

  it("loads every node with its fields intact", async () => {
    const { db, root } = open();
    for (const sessionId of ["chat_shared", "research_shared"]) {
      const nodes = await db.loadNodes(sessionId);
      const files = readdirSync(join(root, sessionId, "history")).sort();
      expect(nodes.map((node) => node.seq)).toEqual(files.map((_, index) => index));
      for (const [index, file] of files.entries()) {
        const onDisk = JSON.parse(readFileSync(join(root, sessionId, "history", file), "utf8")) as Record<
          string,
          unknown
        >;
        expect(nodes[index]).toEqual(onDisk);
      }
    }
  });

  it("walks the chat branch from the head in order", async () => {
    const { db } = open();
    const branch = await db.conversationBranch("chat_shared");
    expect(branch.map((node) => [node.role, node.output])).toEqual([
      ["user", "Plan a short weekend trip"],
      ["llm", "Here is a plan: ..."],
      ["user", "Make it cheaper"],
      ["llm", "Cheaper plan: ..."],
    ]);
  });

  it("reports the research session's caller nesting", async () => {
    const { db } = open();
    const nodes = await db.loadNodes("research_shared");
    const byId = new Map(nodes.map((node) => [node.id, node]));
    const callerName = (name: string): string[] =>
      nodes
        .filter((node) => node.name === name)
        .map((node) => (node.caller === "" ? "" : (byId.get(node.caller)?.name ?? "?")));
    expect(callerName("research_agent")).toEqual([""]);
    expect(callerName("design_experiments")).toEqual(["research_agent"]);
    expect(callerName("write_section")).toEqual(["research_agent"]);
    for (const llm of nodes.filter((node) => node.role === "llm")) {
      expect(byId.get(llm.caller)?.role).toBe("code");
    }
    expect(
      nodes.find((node) => node.role === "llm" && node.caller === nodes.find((n) => n.name === "write_section")?.id)
        ?.output,
    ).toBe("We propose ...");
  });

  it("appends and commits on each fixture session in the layout the Python store reads", async () => {
    const { db, root } = open();
    for (const sessionId of ["chat_shared", "research_shared"]) {
      const before = (await db.loadNodes(sessionId)).length;
      const headBefore = (await db.readMeta(sessionId)).head_id;
      const node = await db.appendNode(
        sessionId,
        { role: "user", output: "Continue, please" },
        { atHead: true, rootMarker: null },
      );
      expect(node.seq).toBe(before);
      expect(node.predecessor).toBe(headBefore);
      expect(node.id).toMatch(/^[0-9a-f]{12}$/);
      const sha = await db.commitTurn(sessionId, "turn from TypeScript");
      expect(sha).toMatch(/^[0-9a-f]{40}$/);

      const fileName = `${String(before).padStart(4, "0")}-u-${node.id}.json`;
      const text = readFileSync(join(root, sessionId, "history", fileName), "utf8");
      const parsed = JSON.parse(text) as Record<string, unknown>;
      expect(Object.keys(parsed)).toEqual(NODE_FIELDS);
      // Byte-for-byte what Python's json.dumps would write for the same value.
      expect(text).toBe(dumpsPython(parsed));
      const metaText = readFileSync(join(root, sessionId, "meta.json"), "utf8");
      const meta = JSON.parse(metaText) as Record<string, unknown>;
      expect(Object.keys(meta)).toEqual(META_FIELDS);
      expect(meta.head_id).toBe(node.id);
      expect(metaText).toBe(dumpsPython(meta));
      expect(git(join(root, sessionId), "log", "-1", "--format=%s|%an <%ae>")).toBe(
        "turn from TypeScript|OpenProgram <openprogram@local>",
      );
      // Nothing is left uncommitted, and our bookkeeping never enters the repository.
      expect(git(join(root, sessionId), "status", "--porcelain")).toBe("");
      expect(git(join(root, sessionId), "ls-files")).not.toMatch(/\.state|tmp/);
    }
    const index = JSON.parse(readFileSync(join(root, "index.json"), "utf8")) as Record<string, Record<string, unknown>>;
    expect(Object.keys(index).sort()).toEqual(["chat_shared", "research_shared"]);
    expect(index.chat_shared?.title).toBe("Weekend plan");
  });
});
