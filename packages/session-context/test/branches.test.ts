// Branches as Python OpenProgram keeps them (PYTHON-COMPAT.md, Branches): the
// fixture written by Python's store read, rendered and continued; checkout,
// naming and edit-and-resend written so that Python reads the same DAG.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  chat,
  NodeNotFoundError,
  NodeNotOnBranchError,
  SessionBusyError,
  sessionContext,
  SummaryHeadError,
  agenticFunction,
  type SessionDB,
} from "../src/index.js";
import { checkoutHead, listBranches, nameBranch } from "../src/entries/store.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";
import { storeInternals } from "../src/store/internal.js";
import { git } from "./helpers.js";

const V2_FIXTURE = fileURLToPath(new URL("./fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url));

let store: TempStore | undefined;
afterEach(() => {
  store?.cleanup();
  store = undefined;
});

function fixtureStore(): { db: SessionDB; root: string } {
  store = createTempStore("openprogram-branches-", { from: V2_FIXTURE });
  return { db: store.db, root: store.root };
}

function meta(root: string, sessionId: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(root, sessionId, "meta.json"), "utf8")) as Record<string, unknown>;
}

describe("branched_shared, written by Python's store", () => {
  it("lists its two tips as Python does: newest first by the name's time, else the node's; the head's marked", async () => {
    const { db } = fixtureStore();
    // The rules: ba1sha (unnamed, the trunk's tip: bu0sha -> ba0sha -> first child bu1sha -> ba1sha) sorts by its
    // node's created_at (…279.45); ba1bsha sorts by its name's updated_at (…266.17), so it comes second.
    expect(await listBranches("branched_shared", { db })).toEqual([
      {
        headId: "ba1sha",
        name: null,
        createdAt: 1796094279.4528494,
        updatedAt: 1796094279.4528494,
        archived: false,
        active: false,
        trunk: true,
      },
      {
        headId: "ba1bsha",
        name: "warmer",
        createdAt: 1796094266.166028,
        updatedAt: 1796094266.166028,
        archived: false,
        active: true,
        trunk: false,
      },
    ]);
  });

  it("renders and continues the head's branch, leaving the other branch and the name where they were", async () => {
    const { db, root } = fixtureStore();
    expect((await db.conversationBranch("branched_shared")).map((node) => node.id)).toEqual([
      "bu0sha",
      "ba0sha",
      "bu1bsha",
      "ba1bsha",
    ]);
    const { runtime, provider } = scriptedRuntime(["Valencia."]);
    await sessionContext({ db, runtime, sessionId: "branched_shared" }, () => chat("Somewhere by the sea"));
    expect(provider.requests[0]?.request.messages).toEqual([
      { role: "user", content: "Suggest a destination" },
      { role: "assistant", content: "Lisbon." },
      { role: "user", content: "Somewhere warmer" },
      { role: "assistant", content: "Seville." },
      { role: "user", content: "Somewhere by the sea" },
    ]);
    const branch = await db.conversationBranch("branched_shared");
    expect(branch.slice(0, 4).map((node) => node.id)).toEqual(["bu0sha", "ba0sha", "bu1bsha", "ba1bsha"]);
    expect(branch.slice(4).map((node) => node.output)).toEqual(["Somewhere by the sea", "Valencia."]);
    const written = meta(root, "branched_shared");
    expect(written.head_id).toBe(branch[5]?.id);
    // Python keys a name by the tip it named; it does not follow the branch as it grows.
    expect(written.branches).toEqual({
      ba1bsha: { name: "warmer", created_at: 1796094266.166028, updated_at: 1796094266.166028 },
    });
    const tips = await listBranches("branched_shared", { db });
    expect(tips.map((tip) => [tip.headId, tip.active])).toEqual([
      [branch[5]?.id, true],
      ["ba1sha", false],
    ]);
  });

  it("checks out the other branch, and the next turn continues it", async () => {
    const { db, root } = fixtureStore();
    expect(await checkoutHead("branched_shared", "ba1sha", { db })).toEqual({
      headId: "ba1sha",
      previousHeadId: "ba1bsha",
    });
    expect(meta(root, "branched_shared").head_id).toBe("ba1sha");
    // The move is committed: the repository is clean, as after every turn.
    expect(git(join(root, "branched_shared"), "status", "--porcelain")).toBe("");
    const { runtime, provider } = scriptedRuntime(["Reykjavik."]);
    await sessionContext({ db, runtime, sessionId: "branched_shared" }, () => chat("Even colder"));
    expect(provider.requests[0]?.request.messages.map((message) => message.content)).toEqual([
      "Suggest a destination",
      "Lisbon.",
      "Somewhere colder",
      "Oslo.",
      "Even colder",
    ]);
  });

  it("names a tip as Python's web page writes a typed name, keeping what the entry held", async () => {
    const { db, root } = fixtureStore();
    const before = Date.now() / 1000;
    const tip = await nameBranch("branched_shared", "ba1sha", "  colder  ", { db });
    expect(tip).toMatchObject({ headId: "ba1sha", name: "colder" });
    const entry = (meta(root, "branched_shared").branches as Record<string, Record<string, unknown>>).ba1sha;
    expect(Object.keys(entry ?? {})).toEqual(["name", "created_at", "updated_at", "name_locked"]);
    expect(entry?.name_locked).toBe(true);
    expect(entry?.created_at).toBe(entry?.updated_at);
    expect(entry?.updated_at as number).toBeGreaterThanOrEqual(before - 1);
    await nameBranch("branched_shared", "ba1bsha", "warmest", { db });
    const renamed = (meta(root, "branched_shared").branches as Record<string, Record<string, unknown>>).ba1bsha;
    expect(renamed?.created_at).toBe(1796094266.166028);
    expect(renamed?.name).toBe("warmest");
  });

  it("refuses what Python refuses, with typed errors, and writes nothing", async () => {
    const { db, root } = fixtureStore();
    const original = readFileSync(join(root, "branched_shared", "meta.json"), "utf8");
    await expect(checkoutHead("branched_shared", "nope", { db })).rejects.toBeInstanceOf(NodeNotFoundError);
    await expect(nameBranch("branched_shared", "ba0sha", "mid", { db })).rejects.toBeInstanceOf(NodeNotOnBranchError);
    await expect(nameBranch("branched_shared", "ba1sha", "   ", { db })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(nameBranch("branched_shared", "ba1sha", "x".repeat(81), { db })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(readFileSync(join(root, "branched_shared", "meta.json"), "utf8")).toBe(original);
  });
});

describe("checkout refusals on sessions we write", () => {
  it("refuses a summary node, a function's inner exchange, and a session running a turn", async () => {
    store = createTempStore("openprogram-branches-");
    const db = store.db;
    const inner = agenticFunction({ name: "inner", doc: "Answer." }, async (_input: object, { runtime }) =>
      runtime.exec("go"),
    );
    const { runtime } = scriptedRuntime(["hi", "inner reply"]);
    const sessionId = await sessionContext({ db, runtime }, async (session) => {
      await chat("hello");
      await inner({});
      return session.sessionId;
    });
    const nodes = await db.loadNodes(sessionId);
    const innerLlm = nodes.find((node) => node.role === "llm" && node.caller !== "");
    await expect(checkoutHead(sessionId, innerLlm?.id ?? "", { db })).rejects.toBeInstanceOf(NodeNotOnBranchError);
    // A compaction summary in Python's shape (as its compaction persister writes one).
    const summary = await db.appendNode(sessionId, {
      id: "summary_0123456789",
      role: "llm",
      name: "context/summary",
      output: "[Previous conversation summary]\nThey said hello.",
      caller: "",
      predecessor: null,
      metadata: { type: "compactionSummary", source: "compaction", compaction: true, covers_ids: [nodes[0]?.id] },
    });
    await expect(checkoutHead(sessionId, summary.id, { db })).rejects.toBeInstanceOf(SummaryHeadError);
    expect((await listBranches(sessionId, { db })).map((tip) => tip.headId)).not.toContain(summary.id);
    // A turn of this process holds the lease: the head stays.
    await sessionContext({ db, runtime: scriptedRuntime(["x"]).runtime, sessionId }, async () => {
      await chat("again");
      const first = nodes[0]?.id ?? "";
      await expect(checkoutHead(sessionId, first, { db })).rejects.toBeInstanceOf(SessionBusyError);
    });
    expect(storeInternals(db).readMetaSync(sessionId).head_id).not.toBe(nodes[0]?.id);
  });
});

describe("a program run continues the branch it follows", () => {
  it("is the tip after it; the turn before it can still be named (Python's panel lists it)", async () => {
    const { db } = fixtureStore();
    const echo = agenticFunction({ name: "echo", doc: "Echo." }, async ({ text }: { text: string }) => text);
    await sessionContext({ db, sessionId: "branched_shared", runtime: null }, () => echo({ text: "hi" }));
    const run = (await db.loadNodes("branched_shared")).at(-1);
    expect(run).toMatchObject({ name: "echo", predecessor: "ba1bsha" });
    const tips = (await listBranches("branched_shared", { db })).map((tip) => tip.headId);
    expect(new Set(tips)).toEqual(new Set(["ba1sha", run?.id]));
    expect(await nameBranch("branched_shared", "ba1bsha", "warmest", { db })).toMatchObject({
      headId: "ba1bsha",
      name: "warmest",
    });
  });
});

describe("edit and resend: chat(text, { from })", () => {
  it("forks beside the edited message, moves the head to the new branch and keeps the old one listed", async () => {
    const { db, root } = fixtureStore();
    const { runtime, provider } = scriptedRuntime(["Marrakesh."]);
    await sessionContext({ db, runtime, sessionId: "branched_shared" }, () =>
      chat("Somewhere hotter", { from: "bu1bsha" }),
    );
    // The request is the branch before the edited message, then the new text.
    expect(provider.requests[0]?.request.messages.map((message) => message.content)).toEqual([
      "Suggest a destination",
      "Lisbon.",
      "Somewhere hotter",
    ]);
    const nodes = await db.loadNodes("branched_shared");
    const [user, reply] = nodes.slice(-2);
    expect(user).toMatchObject({ role: "user", output: "Somewhere hotter", predecessor: "ba0sha", caller: "" });
    expect(user?.metadata).toEqual({ edit_of: "bu1bsha" });
    expect(reply).toMatchObject({ role: "llm", output: "Marrakesh.", predecessor: user?.id });
    expect(meta(root, "branched_shared").head_id).toBe(reply?.id);
    const tips = await listBranches("branched_shared", { db });
    expect(new Set(tips.map((tip) => tip.headId))).toEqual(new Set(["ba1sha", "ba1bsha", reply?.id]));
    expect(tips.find((tip) => tip.active)?.headId).toBe(reply?.id);
  });

  it("edits from a reply (its message) and the first message (a fork at ROOT, as Python writes it)", async () => {
    const { db } = fixtureStore();
    const { runtime } = scriptedRuntime(["Porto.", "Rome."]);
    await sessionContext({ db, runtime, sessionId: "branched_shared" }, async () => {
      await chat("Somewhere in Portugal", { from: "ba1sha" });
      await chat("Suggest a capital", { from: "bu0sha" });
    });
    const nodes = await db.loadNodes("branched_shared");
    expect(nodes.at(-4)).toMatchObject({ output: "Somewhere in Portugal", predecessor: "ba0sha" });
    expect(nodes.at(-2)).toMatchObject({ output: "Suggest a capital", predecessor: "ROOT" });
    expect((await db.conversationBranch("branched_shared")).map((node) => node.output)).toEqual([
      "Suggest a capital",
      "Rome.",
    ]);
  });

  it("refuses an unknown node before the turn writes anything", async () => {
    const { db } = fixtureStore();
    const count = (await db.loadNodes("branched_shared")).length;
    const { runtime } = scriptedRuntime(["never"]);
    await expect(
      sessionContext({ db, runtime, sessionId: "branched_shared" }, () => chat("x", { from: "missing" })),
    ).rejects.toBeInstanceOf(NodeNotFoundError);
    expect(await db.loadNodes("branched_shared")).toHaveLength(count);
  });
});
