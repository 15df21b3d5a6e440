// Issue 20, with real processes: three `openprogram serve --postgres` replicas on one sessions root and one
// fresh database. 30 sessions run at once, spread over the replicas, each watched by a subscriber on another
// replica (every frame, in order, nothing lost or doubled); two turns on one session on two replicas at once
// (exactly one runs); a SIGTERM rolling restart (no turn lost); kill -9 of the replica running a turn (another
// replica resumes it within the lease expiry, and a subscriber elsewhere sees the outcome).
// The steps are the ones deploy/cluster/README.md gives operators.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree, waitFor } from "@openprogram/session-context/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServerFrame } from "../../src/index.js";
import type { TestClient } from "../../src/testing/index.js";
import { killReplica, startReplicaProcess, type ClusterSetup, type ReplicaProcess } from "./replica-processes.js";
import { createTestDatabase, type TestDatabase } from "./test-database.js";

const LEASE_TTL_MS = 2_000;
const SESSIONS = 30;

let database: TestDatabase;
let setup: ClusterSetup;
const replicas: ReplicaProcess[] = [];
const clients: TestClient[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const home = mkdtempSync(join(tmpdir(), "openprogram-cluster-processes-"));
  setup = { home, databaseUrl: database.url, leaseTtlMs: LEASE_TTL_MS };
  // Started together: the migrations race under their advisory lock.
  replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplicaProcess(setup)))));
}, 90_000);

afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(replicas.map((replica) => killReplica(replica, "SIGKILL")));
  await database.drop();
  removeTree(setup.home);
});

async function connect(replica: ReplicaProcess): Promise<TestClient> {
  const client = await replica.connect();
  clients.push(client);
  return client;
}

/** The frames of one turn a client received, from its `session` frame to its end. */
function turnFrames(client: TestClient, sessionId: string, turnId: string): ServerFrame[] {
  const frames = client.frames.filter(
    (frame) => "session_id" in frame && frame.session_id === sessionId && frame.type !== "subscribed",
  );
  const start = frames.findIndex((frame) => frame.type === "session" && frame.turn_id === turnId);
  const end = frames.findIndex(
    (frame, index) => index > start && (frame.type === "turn_done" || frame.type === "turn_failed"),
  );
  return start === -1 || end === -1 ? [] : frames.slice(start, end + 1);
}

let messages = 0;

/**
 * Sends a turn's frame and returns its answer: its own `session` frame or the error refusing it, told apart by
 * client_msg_id (a client subscribed to the session also receives other turns' `session` frames).
 */
async function startTurn(client: TestClient, frame: Record<string, unknown>): Promise<ServerFrame> {
  const id = `t${messages++}`;
  client.send({ ...frame, client_msg_id: id });
  return client.next(["session", "error"], (answer) =>
    answer.type === "session" ? answer.client_msg_id === id : answer.ref === id,
  );
}

async function createSession(client: TestClient): Promise<string> {
  const opened = await startTurn(client, { type: "run", program: "steps", input: { count: 1 } });
  if (opened.type !== "session") throw new Error(`refused: ${JSON.stringify(opened)}`);
  await client.next("turn_done", (frame) => frame.turn_id === opened.turn_id);
  return opened.session_id;
}

describe("three openprogram serve replicas, one sessions root, one database", () => {
  it("30 concurrent sessions spread over the replicas: a subscriber on another replica sees every frame, in order", async () => {
    const starters = await Promise.all(replicas.map((replica) => connect(replica)));
    const watchers = await Promise.all(replicas.map((replica) => connect(replica)));
    const sessionIds = await Promise.all(
      Array.from({ length: SESSIONS }, (_, index) => createSession(starters[index % 3] as TestClient)),
    );
    // Each session is watched from the next replica.
    for (const [index, sessionId] of sessionIds.entries()) {
      const watcher = watchers[(index + 1) % 3] as TestClient;
      watcher.send({ type: "subscribe", session_id: sessionId });
      await watcher.next("subscribed", (frame) => frame.session_id === sessionId);
    }
    for (const [index, sessionId] of sessionIds.entries())
      (starters[index % 3] as TestClient).send({
        type: "run",
        program: "steps",
        input: { count: 4 },
        session_id: sessionId,
        client_msg_id: `m${index}`,
      });
    for (const [index, sessionId] of sessionIds.entries()) {
      const starter = starters[index % 3] as TestClient;
      const watcher = watchers[(index + 1) % 3] as TestClient;
      const done = await starter.next("turn_done", (frame) => frame.client_msg_id === `m${index}`);
      expect(done).toMatchObject({ session_id: sessionId, result: 12 });
      await watcher.next("turn_done", (frame) => frame.turn_id === done.turn_id);
      const seen = turnFrames(starter, sessionId, done.turn_id);
      const relayed = turnFrames(watcher, sessionId, done.turn_id);
      // session, status, 4 x (append + update) of steps plus the top call's, status, turn_done.
      expect(seen.length).toBeGreaterThanOrEqual(14);
      // The starter's frames carry its client_msg_id: the rest must match frame for frame.
      expect(relayed.map(withoutEcho)).toEqual(seen.map(withoutEcho));
    }
    // The session list is the same from every replica (the shared sessions root).
    const lists = await Promise.all(
      starters.map(async (client) => {
        client.send({ type: "list_sessions", limit: 100 });
        return (await client.next("sessions")).sessions.map((session) => `${session.id}:${session.status}`).sort();
      }),
    );
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
    expect(lists[0]?.length).toBeGreaterThanOrEqual(SESSIONS);
  });

  it("two turns on one session started on two replicas at once: exactly one runs, the other gets session_busy", async () => {
    const [a, b] = [await connect(replicas[0] as ReplicaProcess), await connect(replicas[1] as ReplicaProcess)];
    for (let round = 0; round < 4; round++) {
      const sessionId = await createSession(a);
      // A turn that waits for an answer: the two surely overlap, whichever replica reads its frame first.
      const answers = await Promise.all(
        [a, b].map((client) => startTurn(client, { type: "run", program: "ask_color", session_id: sessionId })),
      );
      const ran = answers.filter((frame) => frame.type === "session");
      const refused = answers.filter((frame) => frame.type === "error");
      expect(ran, `${sessionId}: ${JSON.stringify(answers)}`).toHaveLength(1);
      expect(refused).toMatchObject([{ code: "session_busy" }]);
      const winner = answers[0]?.type === "session" ? a : b;
      const turnId = (ran[0] as { turn_id: string }).turn_id;
      const question = await winner.next("question", (frame) => frame.session_id === sessionId);
      winner.send({ type: "answer", question_id: question.question_id, value: "red" });
      await winner.next("turn_done", (frame) => frame.turn_id === turnId);
    }
  });

  it("a SIGTERM rolling restart loses no turn: a waiting question survives its replica and is answered on another", async () => {
    for (let index = 0; index < replicas.length; index++) {
      const restarting = replicas[index] as ReplicaProcess;
      const other = replicas[(index + 1) % replicas.length] as ReplicaProcess;
      const onRestarting = await connect(restarting);
      const onOther = await connect(other);
      // A turn waiting for a human, and a short one that finishes within the grace period.
      onRestarting.send({ type: "run", program: "ask_color" });
      const question = await onRestarting.next("question");
      onRestarting.send({ type: "run", program: "steps", input: { count: 3, pauseMs: 100 } });
      const short = await onRestarting.next("session", (frame) => frame.session_id !== question.session_id);
      restarting.child.kill("SIGTERM");
      expect(await restarting.exited).toBe(0);
      expect(onRestarting.frames.some((frame) => frame.type === "turn_done" && frame.turn_id === short.turn_id)).toBe(
        true,
      );
      // Back on the same port, as systemd restarts openprogram@<n>.
      replicas[index] = await startReplicaProcess(setup, restarting.port);
      onOther.send({ type: "subscribe", session_id: question.session_id });
      const again = await onOther.next("question", (frame) => frame.question_id === question.question_id);
      onOther.send({ type: "answer", question_id: again.question_id, value: "blue", session_id: question.session_id });
      const done = await onOther.next("turn_done", (frame) => frame.session_id === question.session_id);
      expect(done.result).toBe("picked blue");
    }
  });

  it("kill -9 of the replica running a turn: another resumes it within the lease expiry; a subscriber elsewhere sees the end", async () => {
    const [running, resuming, watching] = replicas as [ReplicaProcess, ReplicaProcess, ReplicaProcess];
    const onRunning = await connect(running);
    const onResuming = await connect(resuming);
    const onWatching = await connect(watching);
    const sessionId = await createSession(onRunning);
    onWatching.send({ type: "subscribe", session_id: sessionId });
    await onWatching.next("subscribed");
    const started = await startTurn(onRunning, {
      type: "run",
      program: "steps",
      input: { count: 40, pauseMs: 100 },
      session_id: sessionId,
    });
    if (started.type !== "session") throw new Error(`refused: ${JSON.stringify(started)}`);
    // A few steps done (seen on the watching replica), then the replica dies mid-turn.
    await onWatching.next(
      "node",
      (frame) => frame.op === "update" && frame.node.name === "step" && frame.node.output === 6,
    );
    await killReplica(running);
    const killedAt = Date.now();
    let resumed: ServerFrame | null = null;
    while (resumed === null || resumed.type === "error") {
      if (resumed?.type === "error") {
        expect(resumed.code).toBe("session_busy");
        await new Promise((resolve) => setTimeout(resolve, 150));
      }
      resumed = await startTurn(onResuming, { type: "resume", session_id: sessionId });
      expect(Date.now() - killedAt).toBeLessThan(LEASE_TTL_MS + 15_000);
    }
    expect(resumed).toMatchObject({ kind: "resume", resumed_turn_id: started.turn_id });
    const resumedTurn = (resumed as { turn_id: string }).turn_id;
    const done = await onWatching.next("turn_done", (frame) => frame.turn_id === resumedTurn);
    expect(done.result).toBe(40 * 39);
    replicas[0] = await startReplicaProcess(setup, running.port);
  });
});

describe("a dead replica's row", () => {
  it("kill -9 of a replica: one live replica marks its row gone within the TTL and a beat, and says so once", async () => {
    const dying = replicas[2] as ReplicaProcess;
    const survivors = [replicas[0], replicas[1]] as ReplicaProcess[];
    const row = await database.sql<{ id: string }>(
      "SELECT id FROM openprogram_replicas WHERE pid = $1 AND gone_at IS NULL",
      [dying.child.pid],
    );
    const id = row.rows[0]?.id as string;
    expect(id).toBeDefined();
    await killReplica(dying);
    const killedAt = Date.now();
    await waitFor(
      async () => {
        const gone = await database.sql("SELECT 1 FROM openprogram_replicas WHERE id = $1 AND gone_at IS NOT NULL", [
          id,
        ]);
        return gone.rowCount === 1;
      },
      `replica ${id} marked gone`,
      20_000,
    );
    // The TTL for the heartbeat to go stale, then at most one heartbeat interval (a third of it) of a survivor.
    expect(Date.now() - killedAt).toBeLessThan(LEASE_TTL_MS * 2 + 5_000);
    const saidGone = (): string[] =>
      survivors.flatMap((replica) =>
        replica.output
          .join("")
          .split("\n")
          .filter((line) => line.includes('"replica_gone"') && line.includes(id)),
      );
    // The row is marked before the line reaches our end of the survivor's stdout pipe: wait for the line too.
    await waitFor(async () => saidGone().length > 0, `a survivor saying replica ${id} is gone`, 5_000);
    expect(saidGone()).toHaveLength(1);
    // Each replica counts the live ones from the rows it read at its last heartbeat: the survivor that did not mark
    // the row says so by its next beat.
    const readyz = `${(survivors[0] as ReplicaProcess).httpUrl}/readyz`;
    await waitFor(
      async () => /of 2 live/.test(await fetch(readyz).then((answer) => answer.text())),
      "the survivor's /readyz to count 2 live replicas",
      LEASE_TTL_MS + 10_000,
    );
    replicas[2] = await startReplicaProcess(setup, dying.port);
  });
});

function withoutEcho(frame: ServerFrame): ServerFrame {
  const { client_msg_id: _echo, ...rest } = frame as ServerFrame & { client_msg_id?: string };
  return rest;
}
