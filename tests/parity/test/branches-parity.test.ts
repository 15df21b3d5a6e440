// Branches through every entry: the same edit-and-resend, checkout and naming
// through in-process code, the CLI binary and the dispatcher over WebSocket
// give the same DAG, the same head, the same branch names and the same
// requests to the model; and Python OpenProgram reads the session back with
// the same branches, head and rendered branch (python/read_branches.py: with
// OPENPROGRAM_PYTHON_SRC, Python OpenProgram's own store; else its rules).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "@openprogram/cli/testing";
import { createDispatcher } from "@openprogram/dispatcher";
import { TestClient } from "@openprogram/dispatcher/testing";
import { chat, sessionContext, type SessionNode } from "@openprogram/session-context";
import { archiveSession, checkoutHead, listBranches, nameBranch } from "@openprogram/session-context/store";
import { afterEach, describe, expect, it } from "vitest";
import { createWorkspace, type Workspace } from "./entries.js";
import { hasPython, readBranchesWithPython } from "./python-sessions.js";

const SESSION = "branch_parity";
type Entry = "in-process" | "cli" | "dispatcher";

const workspaces: Workspace[] = [];
afterEach(async () => {
  for (const workspace of workspaces.splice(0)) await workspace.cleanup();
});

/** The model answers with what it was asked last, so every reply says which branch it is on. */
async function workspace(): Promise<Workspace> {
  const created = await createWorkspace((request) => `reply to ${request.json.messages?.at(-1)?.content ?? ""}`);
  workspaces.push(created);
  return created;
}

/** The ids of the nodes holding these outputs, in this session. */
function idOf(nodes: SessionNode[], output: string): string {
  const node = nodes.find((candidate) => candidate.output === output);
  if (!node) throw new Error(`no node says ${output}`);
  return node.id;
}

/**
 * The scenario, through one entry: two turns, edit and resend of the second
 * message, checkout of the old branch's tip, a name for the new one, and the
 * session archived.
 */
async function runScenario(entry: Entry, space: Workspace): Promise<void> {
  const nodes = (): Promise<SessionNode[]> => space.db.loadNodes(SESSION);
  if (entry === "in-process") {
    const inSession = <T>(fn: () => Promise<T>): Promise<T> =>
      sessionContext({ db: space.db, runtime: space.runtime, sessionId: SESSION, source: "test" }, fn);
    await inSession(() => chat("first"));
    await inSession(() => chat("second"));
    const second = idOf(await nodes(), "second");
    await inSession(() => chat("second, edited", { from: second }));
    await checkoutHead(SESSION, idOf(await nodes(), "reply to second"), { db: space.db });
    await nameBranch(SESSION, idOf(await nodes(), "reply to second, edited"), "edited", { db: space.db });
    await archiveSession(SESSION, { db: space.db });
    return;
  }
  if (entry === "cli") {
    const cli = async (args: string[], input?: string): Promise<void> => {
      const result = await runCli(args, { env: space.env, ...(input !== undefined ? { input } : {}) });
      if (result.code !== 0) throw new Error(`openprogram ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
    };
    await cli(["chat", "--session", SESSION], "first\nsecond\n");
    await cli(["chat", "--session", SESSION, "--from", idOf(await nodes(), "second")], "second, edited\n");
    await cli(["sessions", "checkout", SESSION, idOf(await nodes(), "reply to second")]);
    await cli(["sessions", "branches", SESSION, "--name", idOf(await nodes(), "reply to second, edited"), "edited"]);
    await cli(["sessions", "archive", SESSION]);
    return;
  }
  const dispatcher = await createDispatcher({ port: 0, db: space.db, runtime: space.runtime, log: () => undefined });
  const client = await TestClient.connect(dispatcher.wsUrl);
  try {
    const turn = async (frame: Record<string, unknown>): Promise<void> => {
      client.send({ type: "chat", session_id: SESSION, ...frame });
      await client.next("turn_done");
    };
    await turn({ text: "first" });
    await turn({ text: "second" });
    await turn({ text: "second, edited", from: idOf(await nodes(), "second") });
    client.send({ type: "checkout", session_id: SESSION, node_id: idOf(await nodes(), "reply to second") });
    await client.next("head_moved");
    const tip = idOf(await nodes(), "reply to second, edited");
    client.send({ type: "name_branch", session_id: SESSION, head_id: tip, name: "edited", client_msg_id: "n" });
    await client.next("branches", (frame) => frame.client_msg_id === "n");
    // The page's Archive button sends this frame.
    client.send({ type: "archive_session", session_id: SESSION });
    await client.next("session_archived");
  } finally {
    client.close();
    await dispatcher.close();
  }
}

/** The DAG without ids and times: each node's seq, role, output, and its edges as seqs. */
function shape(nodes: SessionNode[]): unknown[] {
  const seqOf = new Map(nodes.map((node) => [node.id, node.seq]));
  const ref = (id: string | null): number | string | null => (id === null || id === "" ? id : (seqOf.get(id) ?? id));
  return nodes.map((node) => ({
    seq: node.seq,
    role: node.role,
    output: node.output,
    caller: ref(node.caller),
    predecessor: ref(node.predecessor),
    edit_of: ref((node.metadata.edit_of as string | undefined) ?? null),
  }));
}

/** What every entry must agree on, ids written as the outputs they carry. */
async function summary(space: Workspace): Promise<Record<string, unknown>> {
  const nodes = await space.db.loadNodes(SESSION);
  const outputOf = new Map(nodes.map((node) => [node.id, node.output]));
  const meta = await space.db.readMeta(SESSION);
  const branches = meta.branches as Record<string, { name: string }>;
  return {
    dag: shape(nodes),
    head: outputOf.get(meta.head_id ?? ""),
    names: Object.fromEntries(Object.entries(branches).map(([id, entry]) => [outputOf.get(id), entry.name])),
    tips: (await listBranches(SESSION, { db: space.db })).map((tip) => [
      outputOf.get(tip.headId),
      tip.name,
      tip.active,
    ]),
    branch: (await space.db.conversationBranch(SESSION)).map((node) => node.output),
    archived: (await space.db.getSession(SESSION))?.archived,
    requests: space.server.requests.map((request) => request.json.messages),
  };
}

describe("branches through every entry", () => {
  it("code, the CLI and the web frames give the same DAG, head, names and model requests", async () => {
    const results: Record<string, Record<string, unknown>> = {};
    for (const entry of ["in-process", "cli", "dispatcher"] as const) {
      const space = await workspace();
      await runScenario(entry, space);
      results[entry] = await summary(space);
    }
    const reference = results["in-process"] as Record<string, unknown>;
    expect(reference).toMatchObject({
      head: "reply to second",
      names: { "reply to second, edited": "edited" },
      tips: [
        ["reply to second, edited", "edited", false],
        ["reply to second", null, true],
      ],
      branch: ["first", "reply to first", "second", "reply to second"],
      archived: true,
    });
    expect((reference.requests as unknown[]).at(-1)).toEqual([
      { role: "user", content: "first" },
      { role: "assistant", content: "reply to first" },
      { role: "user", content: "second, edited" },
    ]);
    expect(results.cli).toEqual(reference);
    expect(results.dispatcher).toEqual(reference);
  });

  it.runIf(hasPython)(
    "Python OpenProgram reads the session back: same tips, names, head and branch; archived hidden",
    async () => {
      const space = await workspace();
      await runScenario("in-process", space);
      const python = readBranchesWithPython(space.root, SESSION);
      const tips = await listBranches(SESSION, { db: space.db });
      const meta = await space.db.readMeta(SESSION);
      expect(python.head_id).toBe(meta.head_id);
      expect(python.tips).toEqual(tips.map((tip) => [tip.headId, tip.name]));
      expect(python.branch).toEqual((await space.db.conversationBranch(SESSION)).map((node) => node.id));
      expect(python.branches_meta).toEqual(meta.branches);
      expect(python.listed).not.toContain(SESSION);
      expect(python.listed_all).toContain(SESSION);
      // The reader that answered, for whoever reads the log: Python OpenProgram's store, or its rules.
      expect(["python-openprogram", "rules"]).toContain(python.reader);
      console.info(`read_branches.py answered as ${python.reader}`);
      const written = JSON.parse(readFileSync(join(space.root, SESSION, "meta.json"), "utf8")) as {
        archived?: boolean;
      };
      expect(written.archived).toBe(true);
    },
  );
});
