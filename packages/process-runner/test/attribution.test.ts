import {
  agenticFunction,
  currentCallId,
  currentSession,
  sessionContext,
  type SessionEvent,
  type SessionNode,
} from "@openprogram/session-context";
import { scriptedRuntime } from "@openprogram/session-context/testing";
import { describe, expect, it } from "vitest";
import { runInChild } from "../src/index.js";
import { outline } from "./programs/outline.js";
import { committedNodeFiles, nodeFilesOnDisk, programPath, scriptedEnv, useTempStore } from "./helpers.js";
import { normaliseNodes } from "./normalise.js";

const OUTLINE = programPath("outline.ts");
const REPLIES = ["A one-sentence summary.", "1. first 2. second 3. third"];

describe("attribution: what the child records hangs under the parent's call", () => {
  const store = useTempStore();

  it("nests under the parent's current call exactly as the same call made in-process", async () => {
    const inProcess = agenticFunction(
      { name: "orchestrate", doc: "Plan the work." },
      async ({ topic }: { topic: string }) => outline({ topic }),
    );
    const observed = { callId: null as string | null, seenNames: [] as string[] };
    const inChild = agenticFunction(
      { name: "orchestrate", doc: "Plan the work." },
      async ({ topic }: { topic: string }) => {
        observed.callId = currentCallId();
        const output = await runInChild<{ summary: string; text: string }>({
          module: OUTLINE,
          export: "outline",
          input: { topic },
          env: scriptedEnv(store, REPLIES),
        });
        // The parent's store sees the child's nodes as soon as the child is done: no stale cache.
        observed.seenNames = (await currentSession().writer.load()).map((node) => node.name);
        return output;
      },
    );

    const expected = await sessionContext(
      { db: store.db, runtime: scriptedRuntime(REPLIES).runtime, source: "test" },
      async (session) => ({
        sessionId: session.sessionId,
        output: await inProcess({ topic: "agent reliability" }),
      }),
    );
    const actual = await sessionContext({ db: store.db, runtime: null, source: "test" }, async (session) => ({
      sessionId: session.sessionId,
      output: await inChild({ topic: "agent reliability" }),
    }));

    expect(actual.output).toEqual(expected.output);
    expect(actual.output).toEqual({ summary: REPLIES[0], text: REPLIES[1] });
    expect(observed.seenNames).toEqual(["orchestrate", "outline", "summarise", "scripted", "scripted"]);

    const childNodes = await store.db.loadNodes(actual.sessionId);
    const [orchestrateNode, outlineNode, summariseNode, summaryLlm, outlineLlm] = childNodes as [
      SessionNode,
      SessionNode,
      SessionNode,
      SessionNode,
      SessionNode,
    ];
    expect(orchestrateNode.id).toBe(observed.callId);
    expect(outlineNode.caller).toBe(orchestrateNode.id);
    expect(summariseNode.caller).toBe(outlineNode.id);
    expect(summaryLlm.caller).toBe(summariseNode.id);
    expect(outlineLlm.caller).toBe(outlineNode.id);
    expect(childNodes.every((node) => node.metadata.status === "completed")).toBe(true);
    // Same tree, same seqs, same prompts (prompt_sha256), as in-process.
    expect(normaliseNodes(childNodes)).toEqual(normaliseNodes(await store.db.loadNodes(expected.sessionId)));
    // The parent's turn committed the child's nodes.
    expect(committedNodeFiles(store.root, actual.sessionId)).toEqual(nodeFilesOnDisk(store.root, actual.sessionId));
  });

  it("at the top level extends the session head, like an in-process top-level call", async () => {
    const first = agenticFunction({ name: "first_step", doc: "Start." }, async () => "started");
    const runTurn = async (viaChild: boolean): Promise<string> =>
      sessionContext({ db: store.db, runtime: scriptedRuntime(REPLIES).runtime, source: "test" }, async (session) => {
        await first({});
        if (viaChild)
          await runInChild({
            module: OUTLINE,
            export: "outline",
            input: { topic: "sparse attention" },
            env: scriptedEnv(store, REPLIES),
          });
        else await outline({ topic: "sparse attention" });
        return session.sessionId;
      });
    const inProcessId = await runTurn(false);
    const childId = await runTurn(true);

    const nodes = await store.db.loadNodes(childId);
    const firstNode = nodes.find((node) => node.name === "first_step") as SessionNode;
    const outlineNode = nodes.find((node) => node.name === "outline") as SessionNode;
    expect(outlineNode.caller).toBe("");
    expect(outlineNode.predecessor).toBe(firstNode.id);
    expect((await store.db.readMeta(childId)).head_id).toBe(outlineNode.id);
    expect(normaliseNodes(nodes)).toEqual(normaliseNodes(await store.db.loadNodes(inProcessId)));
    expect(committedNodeFiles(store.root, childId)).toEqual(nodeFilesOnDisk(store.root, childId));
  });

  it("begins the parent's turn when the child is the first and only thing the turn does", async () => {
    const order: string[] = [];
    const onEvent = (event: SessionEvent): void => {
      if (event.type === "status") order.push(`status:${event.status}`);
      else if (event.type === "node" && event.op === "append") order.push(`append:${event.node.name}`);
    };
    const sessionId = await sessionContext(
      { db: store.db, runtime: null, onEvent, source: "test" },
      async (session) => {
        await runInChild({
          module: OUTLINE,
          export: "outline",
          input: { topic: "only the child" },
          env: scriptedEnv(store, REPLIES),
        });
        return session.sessionId;
      },
    );
    // The session was running before the child recorded anything, and idle after the turn.
    expect(order[0]).toBe("status:running");
    expect(order.at(-1)).toBe("status:idle");
    expect(order.filter((entry) => entry.startsWith("append:"))).toEqual([
      "append:outline",
      "append:summarise",
      "append:scripted",
      "append:scripted",
    ]);
    expect(committedNodeFiles(store.root, sessionId)).toEqual(nodeFilesOnDisk(store.root, sessionId));
    expect(nodeFilesOnDisk(store.root, sessionId)).toHaveLength(4);
  });
});
