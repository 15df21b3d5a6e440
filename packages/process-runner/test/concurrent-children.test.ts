// Heavy (run alone by test:heavy): ten child processes writing one session at once.
import { agenticFunction, sessionContext, type SessionEvent, type SessionNode } from "@openprogram/session-context";
import { describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { committedNodeFiles, nodeFilesOnDisk, programPath, scriptedEnv, useTempStore } from "./helpers.js";

const OUTLINE = programPath("outline.ts");
const REPLIES = ["A one-sentence summary.", "1. first 2. second 3. third"];

describe("concurrent children in one session", () => {
  const store = useTempStore();

  it("keeps seq unique and gap-free with 10 concurrent children in one session", async () => {
    const env = scriptedEnv(store, REPLIES);
    const fanOut = agenticFunction({ name: "fan_out", doc: "Run ten outlines at once." }, async () => {
      const runs = Array.from({ length: 10 }, (_, index) =>
        runInChild({ module: OUTLINE, export: "outline", input: { topic: `topic ${index}` }, env }),
      );
      expect(new Set(runs.map((run) => run.pid)).size).toBe(10);
      return Promise.all(runs.map(async (run) => run.result));
    });
    // Each relayed append: is the node already visible to the parent's store at that moment? (getNode reads
    // synchronously when called; only its answer arrives later.)
    const visibleOnArrival: Array<Promise<boolean>> = [];
    const onEvent = (event: SessionEvent): void => {
      if (event.type === "node" && event.op === "append")
        visibleOnArrival.push(store.db.getNode(event.sessionId, event.node.id).then((node) => node !== null));
    };
    const { sessionId, fanOutId, outputs } = await sessionContext(
      { db: store.db, runtime: null, onEvent, source: "test" },
      async (session) => {
        const results = await fanOut({});
        const nodes = await store.db.loadNodes(session.sessionId);
        return { sessionId: session.sessionId, fanOutId: nodes[0]?.id, outputs: results };
      },
    );
    expect(outputs).toHaveLength(10);
    expect(visibleOnArrival).toHaveLength(41);
    expect((await Promise.all(visibleOnArrival)).every(Boolean)).toBe(true);

    const nodes = await store.db.loadNodes(sessionId);
    // 1 fan_out + 10 x (outline, summarise, 2 llm nodes)
    expect(nodes).toHaveLength(41);
    expect(nodes.map((node) => node.seq)).toEqual(Array.from({ length: 41 }, (_, index) => index));
    expect((await store.db.readHistory(sessionId)).problems).toEqual([]);
    const outlines = nodes.filter((node) => node.name === "outline");
    expect(outlines).toHaveLength(10);
    expect(new Set(outlines.map((node) => JSON.stringify(node.input)))).toEqual(
      new Set(Array.from({ length: 10 }, (_, index) => JSON.stringify({ topic: `topic ${index}` }))),
    );
    for (const outlineNode of outlines) {
      expect(outlineNode.caller).toBe(fanOutId);
      const children = nodes.filter((node) => node.caller === outlineNode.id);
      expect(children.map((node) => node.name)).toEqual(["summarise", "scripted"]);
      const summariseNode = children[0] as SessionNode;
      expect(nodes.filter((node) => node.caller === summariseNode.id).map((node) => node.name)).toEqual(["scripted"]);
    }
    expect(nodes.every((node) => node.metadata.status === "completed")).toBe(true);
    expect(committedNodeFiles(store.root, sessionId)).toEqual(nodeFilesOnDisk(store.root, sessionId));
  });
});
