// Compaction and branches through a child process: a program run by the process runner
// (runInChild) and the same program run in-process, each on its own copy of Python's
// sessions, leave the same files (ids minted at random and times aside, except a summary's,
// which Python dates), and the session's next turn sends the model the same prompt.
// Python's rules read the result back (python/render_compacted.py, python/read_branches.py).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runInChild } from "@openprogram/process-runner";
import {
  chat,
  isAgenticFunction,
  sessionContext,
  type AgenticFunction,
  type SessionNode,
} from "@openprogram/session-context";
import { listBranches, SessionDB } from "@openprogram/session-context/store";
import { removeTree, startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parityEnv, parityRuntime } from "./entries.js";
import {
  hasPython,
  readBranchesWithPython,
  renderCompactedWithPython,
  summarisingModel,
  unpackPythonSessions,
} from "./python-sessions.js";

const PROGRAM = fileURLToPath(new URL("../programs/long-session.mjs", import.meta.url));

type Entry = "in-process" | "child-process";
/** What one entry left behind. */
interface Seen {
  files: unknown;
  result: unknown;
  prompt: unknown;
  home: string;
}

let server: FakeOpenAIServer;
let base: string;

beforeAll(async () => {
  server = await startFakeOpenAIServer(
    summarisingModel(
      "The user drafted notes for chapters one to five.",
      (request) => `reply to ${String(request.json.messages?.at(-1)?.content ?? "")}`,
    ),
  );
  base = mkdtempSync(join(tmpdir(), "openprogram-long-session-child-"));
});

afterAll(async () => {
  await server?.close();
  if (base) removeTree(base);
});

/** A fresh copy of Python's sessions for one entry; its home, store and the environment pointing a child at both. */
function copyOfFixture(name: string): { home: string; db: SessionDB; env: Record<string, string> } {
  const home = join(base, name);
  return { home, db: new SessionDB({ root: unpackPythonSessions(home) }), env: parityEnv(home, server.baseUrl) };
}

/** Runs one export of the program in `sessionId`, in this process or in a child (whose runtime comes from `env`). */
async function runProgram(
  entry: Entry,
  space: ReturnType<typeof copyOfFixture>,
  sessionId: string,
  exportName: string,
  input: Record<string, unknown>,
): Promise<unknown> {
  if (entry === "in-process") {
    const fn = ((await import(PROGRAM)) as Record<string, unknown>)[exportName];
    if (!isAgenticFunction(fn)) throw new Error(`${exportName} is not agentic`);
    return sessionContext({ db: space.db, runtime: parityRuntime(server.baseUrl), sessionId, source: "test" }, () =>
      (fn as AgenticFunction<Record<string, unknown>, unknown>)(input),
    );
  }
  // The parent has no runtime: the child builds its own from the environment, like any entry.
  return sessionContext(
    { db: space.db, runtime: null, sessionId, source: "test" },
    async () => runInChild({ module: PROGRAM, export: exportName, input, env: space.env }).result,
  );
}

/** The DAG and meta.json with random ids renamed by seq and times dropped, except a summary's. */
async function files(db: SessionDB, sessionId: string): Promise<unknown> {
  const nodes = await db.loadNodes(sessionId);
  const fixed = /sha$|^summary_3bd8271008$/;
  const name = new Map(nodes.map((node) => [node.id, fixed.test(node.id) ? node.id : `new#${node.seq}`]));
  const rename = (id: unknown): unknown => (typeof id === "string" ? (name.get(id) ?? id) : id);
  const meta = await db.readMeta(sessionId);
  const branches = (meta.branches ?? {}) as Record<string, Record<string, unknown>>;
  return {
    nodes: nodes.map(({ created_at, ...node }: SessionNode) => ({
      ...node,
      id: rename(node.id),
      caller: rename(node.caller),
      predecessor: rename(node.predecessor),
      reads: node.reads.map(rename),
      // What differs by nature between two runs: the turn's id, durations; and the trace a child joins.
      metadata: Object.fromEntries(
        Object.entries(node.metadata)
          .filter(
            ([key]) =>
              !["turn_id", "duration_seconds", "duration_ms", "started_at", "finished_at", "traceparent"].includes(key),
          )
          .map(([key, value]) => [key, key === "covers_ids" ? (value as string[]).map(rename) : value]),
      ),
      ...(node.name === "context/summary" ? { created_at } : {}),
    })),
    head: rename(meta.head_id),
    summary: rename(meta._last_summary_id),
    summaryText: meta._last_summary_text,
    branches: Object.fromEntries(
      Object.entries(branches).map(([id, entry]): [string, unknown] => [String(rename(id)), entry.name]),
    ),
    commits: (await db.gitLog(sessionId)).length,
  };
}

/** The next chat turn's request, sent from this process after the entry is done. */
async function nextPrompt(db: SessionDB, sessionId: string): Promise<unknown> {
  await sessionContext({ db, runtime: parityRuntime(server.baseUrl), sessionId }, () => chat("And the next chapter?"));
  return server.requests.at(-1)?.json.messages;
}

/**
 * Runs one export of the program on a fresh copy of Python's `sessionId` in this process and in a child:
 * both must return the same, leave the same files and send the same next prompt. Returns what each left.
 */
async function inProcessAndChild(
  sessionId: string,
  exportName: string,
  input: Record<string, unknown>,
): Promise<{ reference: Seen; child: Seen }> {
  const seen = new Map<Entry, Seen>();
  for (const entry of ["in-process", "child-process"] as const) {
    const space = copyOfFixture(`${exportName}-${entry}`);
    const result = await runProgram(entry, space, sessionId, exportName, input);
    seen.set(entry, {
      result,
      files: await files(space.db, sessionId),
      prompt: await nextPrompt(space.db, sessionId),
      home: space.home,
    });
  }
  const reference = seen.get("in-process") as Seen;
  const child = seen.get("child-process") as Seen;
  expect(child.result).toEqual(reference.result);
  expect(child.files).toEqual(reference.files);
  expect(child.prompt).toEqual(reference.prompt);
  return { reference, child };
}

describe("compaction and branches through a child process", () => {
  it("compacting Python's compacted_shared from a program gives the same files and next prompt in a child", async () => {
    const { reference, child } = await inProcessAndChild("compacted_shared", "compactHere", { keep: 30 });
    // What they agree on is Python's shape: a summary covering every real turn, dated 1 µs before Python's.
    const { nodes, summary, summaryText } = reference.files as {
      nodes: SessionNode[];
      summary: string;
      summaryText: string;
    };
    const written = nodes.find((node) => node.id === summary) as SessionNode;
    expect(written).toMatchObject({
      name: "context/summary",
      predecessor: null,
      created_at: 1796094266.4528484 - 1e-6,
      metadata: {
        covers_ids: ["u0sha", "a0sha", "u1sha", "a1sha", "u2sha", "a2sha", "u3sha", "a3sha", "u4sha", "a4sha"],
      },
    });
    expect(summaryText).toBe("The user drafted notes for chapters one to five.");
    const prompt = reference.prompt as Array<{ role: string; content: string }>;
    expect(prompt[0]).toEqual({
      role: "assistant",
      content: "[Previous conversation summary]\nThe user drafted notes for chapters one to five.",
    });
    expect(prompt.at(-1)).toEqual({ role: "user", content: "And the next chapter?" });
    if (hasPython) {
      const python = renderCompactedWithPython(join(child.home, "sessions"), "compacted_shared");
      const db = new SessionDB({ root: join(child.home, "sessions") });
      const reply = (await db.loadNodes("compacted_shared")).at(-1) as SessionNode;
      expect(python.rendered).toEqual([...reply.reads, reply.id]);
      expect(python.rendered[0]).toBe(python.active);
    }
  });

  it("naming and continuing the head's branch of Python's branched_shared from a program is the same in a child", async () => {
    const { reference, child } = await inProcessAndChild("branched_shared", "continueBranch", {
      tip: "ba1bsha",
      name: "warmest",
      other: "ba1sha",
    });
    // The head's branch ("warmer", renamed) was continued; moving the head under a running turn is refused everywhere.
    expect(reference.result).toMatchObject({ named: "ba1bsha", refused: "session_busy" });
    expect((reference.files as { branches: Record<string, string> }).branches).toEqual({ ba1bsha: "warmest" });
    const prompt = reference.prompt as Array<{ content: string }>;
    expect(prompt.map((message) => message.content).join("\n")).not.toContain(
      (await readFixtureOutput(reference.home, "ba1sha")) as string,
    );
    if (hasPython) {
      const root = join(child.home, "sessions");
      const python = readBranchesWithPython(root, "branched_shared");
      const db = new SessionDB({ root });
      expect(python.head_id).toBe((await db.readMeta("branched_shared")).head_id);
      // Python's panel lists what ours does, and also the turn a program run continues (it counts only user and llm
      // turns as continuing one; ours counts a run too, so that only an edit makes a branch).
      const ours = (await listBranches("branched_shared", { db })).map((tip) => [tip.headId, tip.name]);
      const nodes = await db.loadNodes("branched_shared");
      const continuedByRun = new Set(
        nodes.filter((node) => node.role === "code" && node.caller === "").map((node) => node.predecessor),
      );
      expect(python.tips.filter(([id]) => !continuedByRun.has(id))).toEqual(ours);
      expect(python.branch).toEqual((await db.conversationBranch("branched_shared")).map((node) => node.id));
    }
  });
});

/** A node's output as Python wrote it in the fixture (the other branch's reply). */
async function readFixtureOutput(home: string, nodeId: string): Promise<unknown> {
  const node = (await new SessionDB({ root: join(home, "sessions") }).loadNodes("branched_shared")).find(
    (candidate) => candidate.id === nodeId,
  );
  if (!node) throw new Error(`no ${nodeId} in the fixture`);
  return node.output;
}
