// Compaction through every entry gives the same DAG, and Python reads what we wrote with the same
// rendered history. Each entry compacts its own copy of Python's compacted_shared (a session Python
// already compacted once), so it is also a re-compaction of Python's summary.
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@openprogram/cli/testing";
import { createDispatcher } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { chat, sessionContext, type SessionNode } from "@openprogram/session-context";
import { compactSession, SUMMARIZE_CONVERSATION_DOC } from "@openprogram/session-context/compaction";
import { SessionDB } from "@openprogram/session-context/store";
import { removeTree, startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parityEnv, parityRuntime } from "./entries.js";
import { hasPython, renderCompactedWithPython, summarisingModel, unpackPythonSessions } from "./python-sessions.js";

const SESSION = "compacted_shared";
const KEEP = "30";

type Entry = "code" | "cli" | "web";
const ENTRIES: Entry[] = ["code", "cli", "web"];

let server: FakeOpenAIServer;
let base: string;
const roots = new Map<Entry, string>();

beforeAll(async () => {
  server = await startFakeOpenAIServer(
    summarisingModel(
      "The user drafted notes for chapters one to four.",
      () => "Notes for chapter six: point A, point B.",
    ),
  );
  base = mkdtempSync(join(tmpdir(), "openprogram-compaction-parity-"));
  const python = unpackPythonSessions(base);
  for (const entry of ENTRIES) {
    const home = join(base, entry);
    cpSync(python, join(home, "sessions"), { recursive: true });
    roots.set(entry, join(home, "sessions"));
  }
  await Promise.all(ENTRIES.map((entry) => compactThrough(entry)));
}, 240_000);

afterAll(async () => {
  await server?.close();
  if (base) removeTree(base);
});

async function compactThrough(entry: Entry): Promise<void> {
  const root = roots.get(entry) as string;
  const db = new SessionDB({ root });
  switch (entry) {
    case "code":
      await compactSession(SESSION, { db, runtime: parityRuntime(server.baseUrl), keepRecentTokens: Number(KEEP) });
      return;
    case "cli": {
      const home = join(root, "..");
      const result = await runCli(["sessions", "compact", SESSION, "--keep-recent-tokens", KEEP, "--json"], {
        env: parityEnv(home, server.baseUrl),
      });
      if (result.code !== 0) throw new Error(`sessions compact exited ${result.code}:\n${result.stderr}`);
      expect(result.stderr).toMatch(
        /^compacted session compacted_shared: summary summary_[0-9a-f]{10} stands for 8 earlier nodes, 2 kept verbatim/m,
      );
      return;
    }
    case "web": {
      const dispatcher = await createDispatcher({ db, runtime: parityRuntime(server.baseUrl), port: 0 });
      try {
        const client = await TestClient.connect(dispatcher.wsUrl);
        client.send({ type: "compact", session_id: SESSION, keep_recent_tokens: Number(KEEP) });
        await client.next("compacted");
        client.close();
      } finally {
        await dispatcher.close();
      }
    }
  }
}

/** The DAG without what differs by nature between runs: times and the summary's random id. */
async function shape(entry: Entry): Promise<unknown> {
  const db = new SessionDB({ root: roots.get(entry) as string });
  const nodes = await db.loadNodes(SESSION);
  const meta = await db.readMeta(SESSION);
  const rename = (id: unknown): unknown =>
    typeof id === "string" && id.startsWith("summary_") && id !== "summary_3bd8271008" ? "NEW_SUMMARY" : id;
  return {
    // Times differ by nature, except a summary's: Python dates it 1 µs before the first node it covers.
    nodes: nodes.map(({ created_at, ...node }: SessionNode) => ({
      ...node,
      id: rename(node.id),
      ...(node.name === "context/summary" ? { created_at } : {}),
    })),
    head: meta.head_id,
    summary: rename(meta._last_summary_id),
    summaryText: meta._last_summary_text,
    commits: (await db.gitLog(SESSION)).length,
  };
}

describe("compaction through code, the CLI and the web", () => {
  it("gives the same DAG from every entry: one summary covering Python's and two more turns, head unmoved", async () => {
    const reference = await shape("code");
    for (const entry of ENTRIES) expect(await shape(entry), entry).toEqual(reference);
    const { nodes, head, summaryText } = reference as { nodes: SessionNode[]; head: string; summaryText: string };
    expect(nodes).toHaveLength(12);
    expect(nodes[11]).toMatchObject({
      id: "NEW_SUMMARY",
      role: "llm",
      name: "context/summary",
      predecessor: null,
      metadata: { covers_ids: ["u0sha", "a0sha", "u1sha", "a1sha", "u2sha", "a2sha", "u3sha", "a3sha"] },
      // The first node it covers is Python's summary (1796094266.4528484): ours is 1 µs earlier.
      created_at: 1796094266.4528484 - 1e-6,
    });
    expect(head).toBe("a4sha");
    expect(summaryText).toBe("The user drafted notes for chapters one to four.");
    // Every entry's summariser saw the same request: Python's _last_summary_text and the two newly covered turns.
    const summariser = server.requests.filter(
      (request) => request.json.messages?.[0]?.content === SUMMARIZE_CONVERSATION_DOC,
    );
    expect(summariser).toHaveLength(ENTRIES.length);
    expect(new Set(summariser.map((request) => request.body)).size).toBe(1);
  });

  it.skipIf(!hasPython)(
    "is read back by Python's rules with the history TypeScript renders, before and after a turn",
    async () => {
      const root = roots.get("code") as string;
      const db = new SessionDB({ root });
      const meta = await db.readMeta(SESSION);
      const python = renderCompactedWithPython(root, SESSION);
      expect(python.active).toBe(meta._last_summary_id);
      expect(python.rendered).toEqual([meta._last_summary_id, "u4sha", "a4sha"]);
      // Continue the session from TypeScript: the reply read what Python renders, and Python renders it next.
      await sessionContext({ sessionId: SESSION, db, runtime: parityRuntime(server.baseUrl) }, () =>
        chat("Draft notes for chapter six"),
      );
      const nodes = await db.loadNodes(SESSION);
      const reply = nodes.at(-1) as SessionNode;
      expect(renderCompactedWithPython(root, SESSION).rendered).toEqual([...reply.reads, reply.id]);
      expect(reply.reads.slice(0, 3)).toEqual(python.rendered);
    },
  );
});
