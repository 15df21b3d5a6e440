// Issue 19: the usage total a turn's end writes (usage.json) is kept node by node (UsageTally) instead of being
// rebuilt from every node of the session at each turn; it must stay exactly what a scan of every node file gives.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SessionNode } from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { USAGE_TOTAL_FILE } from "../src/entries/usage.js";
import { dumpsPython } from "../src/json/python-json.js";
import { readUsageTotal } from "../src/store/usage-total.js";
import { usageBuckets } from "../src/usage/usage-buckets.js";
import { UsageTally } from "../src/usage/usage-tally.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const DAY = 86_400;
const START = 1_796_000_000;

function llm(seq: number, model: string, day: number, usage: Record<string, unknown> | null): SessionNode {
  return {
    id: `n${seq}`,
    created_at: START + day * DAY + seq,
    seq,
    role: "llm",
    name: model,
    input: null,
    output: "reply",
    caller: "",
    predecessor: null,
    reads: [],
    metadata: usage === null ? {} : { usage },
  };
}

describe("UsageTally", () => {
  it("gives usageBuckets' answer after nodes are added, replaced and dropped, touching only those", () => {
    const bySeq = new Map<number, SessionNode>();
    const put = (node: SessionNode): void => void bySeq.set(node.seq, node);
    put(llm(0, "m-1", 0, { inputTokens: 10, outputTokens: 1 }));
    put(llm(1, "m-2", 0, null));
    put({ ...llm(2, "", 1, null), role: "user" });
    const tally = UsageTally.of([...bySeq.values()]);
    const ordered = (): SessionNode[] => [...bySeq.values()].sort((a, b) => a.seq - b.seq);
    expect(tally.buckets(bySeq)).toEqual(usageBuckets(ordered()));

    // A reply finished later (its usage arrives), a new day and model, Python's usage shape, a seq rewritten.
    put(llm(1, "m-2", 0, { inputTokens: 7, outputTokens: 3, cachedInputTokens: 2 }));
    put(llm(3, "m-3", 2, { input_tokens: 70, output_tokens: 9, cache_read: 30, cache_create: 5 }));
    put(llm(4, "m-1", 2, { inputTokens: 5, outputTokens: 5 }));
    for (const seq of [1, 3, 4]) tally.touch(seq);
    expect(tally.buckets(bySeq)).toEqual(usageBuckets(ordered()));

    put(llm(0, "m-2", 0, { inputTokens: 1, outputTokens: 1 }));
    bySeq.delete(4);
    tally.touch(0);
    tally.touch(4);
    const after = tally.buckets(bySeq);
    expect(after).toEqual(usageBuckets(ordered()));
    // m-1 had only seqs 0 and 4: its buckets are gone, not left at zero.
    expect(after.map((bucket) => bucket.model)).not.toContain("m-1");
    // The buckets handed out are copies: changing them changes nothing kept.
    (after[0] as { calls: number }).calls = 99;
    expect(tally.buckets(bySeq)).toEqual(usageBuckets(ordered()));
  });

  it("asks to be rebuilt when a count is not a whole number (sums of those depend on their order)", () => {
    const nodes = [llm(0, "m-1", 0, { inputTokens: 0.1, outputTokens: 1 }), llm(1, "m-1", 0, null)];
    expect(UsageTally.of(nodes).usable).toBe(false);
    expect(UsageTally.of([llm(0, "m-1", 0, { inputTokens: 3, outputTokens: 1 })]).usable).toBe(true);
  });
});

describe("the usage total at each turn's end", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-tally-");
  });
  afterEach(() => store.cleanup());

  /** One turn: a user node, an llm node appended running and finished with its usage, as a chat turn writes them. */
  async function chatTurn(
    db: SessionDB,
    sessionId: string,
    turn: number,
    usage: Record<string, number>,
  ): Promise<void> {
    const turnId = `turn_${String(turn).padStart(10, "0")}`;
    await db.beginTurn(sessionId, turnId);
    await db.appendNode(sessionId, { role: "user", output: `question ${turn}` }, { atHead: true });
    const reply = await db.appendNode(
      sessionId,
      { role: "llm", name: turn % 2 === 0 ? "m-1" : "m-2", metadata: { status: "running" } },
      { atHead: true, moveHead: false },
    );
    await db.updateNode(
      sessionId,
      reply.id,
      { output: "answer", metadata: { status: "completed", usage } },
      { advanceHead: true },
    );
    await db.endTurn(sessionId, turnId, { status: "idle" });
  }

  function totalMatchesScan(sessionId: string, nodes: SessionNode[]): void {
    const dir = join(store.root, sessionId);
    const total = readUsageTotal(dir);
    expect(total).not.toBeNull();
    expect(total).toEqual(usageBuckets(nodes));
  }

  it("equals a scan of every node after turns, a Python turn written meanwhile, and in a new process", async () => {
    const sessionId = "tally";
    await store.db.createSession({ id: sessionId });
    for (let turn = 0; turn < 6; turn++)
      await chatTurn(store.db, sessionId, turn, { inputTokens: 100 + turn, outputTokens: turn });
    totalMatchesScan(sessionId, await store.db.loadNodes(sessionId));

    // A node Python OpenProgram wrote (no journal line): the next turn's end still counts it.
    const history = join(store.root, sessionId, "history");
    const seq = (await store.db.loadNodes(sessionId)).length;
    const python = { ...llm(seq, "", 0, { input_tokens: 70, output_tokens: 9, cache_read: 30, cache_create: 0 }) };
    python.id = "pyreply00001";
    writeFileSync(join(history, `${String(seq).padStart(4, "0")}-l-pyreply00001.json`), dumpsPython(python));
    await chatTurn(store.db, sessionId, 6, { inputTokens: 5, outputTokens: 5 });
    const nodes = await store.db.loadNodes(sessionId);
    expect(nodes.some((node) => node.id === "pyreply00001")).toBe(true);
    totalMatchesScan(sessionId, nodes);

    // Another store instance (a new process's view) starts from the nodes and keeps up from there.
    const other = new SessionDB({ root: store.root });
    await chatTurn(other, sessionId, 7, { inputTokens: 9, outputTokens: 1 });
    await chatTurn(store.db, sessionId, 8, { inputTokens: 11, outputTokens: 2 });
    totalMatchesScan(sessionId, await new SessionDB({ root: store.root }).loadNodes(sessionId));
    await other.flushRegistry();
    const file = JSON.parse(readFileSync(join(store.root, sessionId, USAGE_TOTAL_FILE), "utf8")) as { version: number };
    expect(file.version).toBe(1);
  });
});
