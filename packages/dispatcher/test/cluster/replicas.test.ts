// Issue 20: dispatchers as replicas of a cluster coordinated through a real PostgreSQL (a fresh database per
// file): leases across replicas, events relayed in order, frames forwarded to the replica running the turn,
// big payloads, readiness through an outage, and migrations raced by replicas starting together.
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agenticFunction, askUser, CancelledError, type Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { removeTree, startFakeOpenAIServer, waitFor } from "@openprogram/session-context/testing";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createDispatcher,
  migrate,
  MIGRATIONS,
  SCHEMA_VERSION,
  type Dispatcher,
  type LogEntry,
} from "../../src/index.js";
import { TestClient } from "../../src/testing/index.js";
import { asError, asFrame, closeAll, httpGet, onCleanup, type Frame } from "../helpers.js";
import { channelApplicationName } from "../../src/cluster/bus.js";
import { GONE_RETENTION_MS, ReplicaRegistry } from "../../src/cluster/replicas.js";
import { createTestDatabase, endPool, TEST_CLUSTER_SECRET, type TestDatabase } from "./test-database.js";

const step = agenticFunction({ name: "step", doc: "One step." }, async ({ index }: { index: number }) => {
  await new Promise((resolve) => setTimeout(resolve, 5));
  return index * 2;
});
const askColor = agenticFunction({ name: "ask_color", doc: "A step, then a question." }, async () => {
  await step({ index: 1 });
  const color = await askUser("Which color?", { choices: ["red", "blue"] });
  return `picked ${color}`;
});
const steps = agenticFunction({ name: "steps", doc: "Several steps." }, async ({ count }: { count: number }) => {
  let sum = 0;
  for (let index = 0; index < count; index++) sum += await step({ index });
  return sum;
});
const bigResult = agenticFunction({ name: "big_result", doc: "A result over NOTIFY's limit." }, async () => {
  await step({ index: 3 });
  return "x".repeat(20_000);
});
const waitForStop = agenticFunction(
  { name: "wait_for_stop", doc: "Waits until cancelled." },
  (_input: Record<string, never>, { signal }) =>
    new Promise((_resolve, reject) => {
      signal.addEventListener("abort", () => reject(new CancelledError(String(signal.reason))), { once: true });
    }),
);
const programs = { ask_color: askColor, steps, big_result: bigResult, wait_for_stop: waitForStop };

let database: TestDatabase;
let root: string;
beforeAll(async () => {
  database = await createTestDatabase();
  root = mkdtempSync(join(tmpdir(), "openprogram-cluster-"));
});
/** Login roles made for outage tests (PostgreSQL roles outlive databases): dropped after the database. */
const roles: string[] = [];
afterAll(async () => {
  await database.drop();
  for (const role of roles) await database.admin(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
  removeTree(root);
});
afterEach(closeAll);

interface Replica {
  dispatcher: Dispatcher;
  logs: LogEntry[];
  connect(): Promise<TestClient>;
}

async function startReplica(
  leaseTtlMs = 2_000,
  as: { postgresUrl?: string; replicaId?: string; runtime?: Runtime } = {},
): Promise<Replica> {
  const logs: LogEntry[] = [];
  const dispatcher = await createDispatcher({
    port: 0,
    sessionsRoot: root,
    runtime: as.runtime ?? null,
    programs,
    log: (entry) => logs.push(entry),
    cluster: {
      postgresUrl: as.postgresUrl ?? database.url,
      leaseTtlMs,
      poolSize: 4,
      replicaId: as.replicaId,
      secrets: [TEST_CLUSTER_SECRET],
    },
  });
  onCleanup(() => dispatcher.close());
  return {
    dispatcher,
    logs,
    connect: async () => {
      const client = await TestClient.connect(dispatcher.wsUrl);
      onCleanup(() => client.close());
      return client;
    },
  };
}

/** A session made by a finished turn on `replica`, so other clients can subscribe to it. */
async function newSession(client: TestClient): Promise<string> {
  client.send({ type: "run", program: "steps", input: { count: 1 } });
  await client.next("session");
  const done = await client.next("turn_done");
  return done.session_id;
}

/** The frames of a session a client received, without the subscription's own. */
function sessionFrames(client: TestClient, sessionId: string): Frame[] {
  return client.frames.filter(
    (frame) =>
      "session_id" in frame &&
      frame.session_id === sessionId &&
      !["subscribed", "unsubscribed", "session_detail", "error"].includes(frame.type),
  );
}

/**
 * The frames of one turn, from its `session` frame on. (The end of an earlier turn may reach a replica's new
 * subscriber just after it subscribed: the channel delivers a moment later than the replica running the turn.)
 */
function turnFrames(client: TestClient, sessionId: string, turnId: string): Frame[] {
  const frames = sessionFrames(client, sessionId);
  const start = frames.findIndex((frame) => frame.type === "session" && frame.turn_id === turnId);
  expect(start).toBeGreaterThanOrEqual(0);
  return frames.slice(start);
}

/** Compares without printing kilobytes of a frame on failure. */
function summary(frames: Frame[]): string[] {
  return frames.map((frame) => `${frame.type} ${JSON.stringify(frame).length} ${JSON.stringify(frame).slice(0, 160)}`);
}

describe("migrations", () => {
  it("replicas starting together migrate once; a schema newer than the release is refused with schema_too_new", async () => {
    const fresh = await createTestDatabase();
    onCleanup(() => fresh.drop());
    const clients = Array.from({ length: 4 }, () => new pg.Client({ connectionString: fresh.url }));
    await Promise.all(clients.map((client) => client.connect()));
    const results = await Promise.all(clients.map((client) => migrate(client)));
    await Promise.all(clients.map((client) => client.end()));
    expect(results.filter((result) => result.from === 0)).toHaveLength(1);
    expect(results.every((result) => result.to === SCHEMA_VERSION)).toBe(true);
    const versions = await fresh.sql<{ version: number }>("SELECT version FROM openprogram_schema ORDER BY version");
    expect(versions.rows.map((row) => row.version)).toEqual(MIGRATIONS.map((step) => step.version));

    await fresh.sql("INSERT INTO openprogram_schema (version) VALUES ($1)", [SCHEMA_VERSION + 1]);
    const refused = await createDispatcher({
      port: 0,
      sessionsRoot: root,
      runtime: null,
      cluster: { postgresUrl: fresh.url, secrets: [TEST_CLUSTER_SECRET] },
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "schema_too_new" });
    expect((refused as Error).message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
  });

  it("an unreachable database is database_unavailable, and the message carries no password", async () => {
    const refused = await createDispatcher({
      port: 0,
      sessionsRoot: root,
      runtime: null,
      cluster: { postgresUrl: "postgres://someone:s3cret-pw@127.0.0.1:1/nothing", secrets: [TEST_CLUSTER_SECRET] },
    }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "database_unavailable" });
    expect((refused as Error).message).not.toContain("s3cret-pw");
    expect((refused as Error).message).toContain("127.0.0.1:1");
  });
});

describe("two replicas on one sessions root and one database", () => {
  it("one turn per session across replicas: the second gets session_busy naming the replica, then runs once the first ends", async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    onA.send({ type: "run", program: "ask_color", session_id: sessionId });
    const question = await onA.next("question");
    const busy = asError(
      await onB.request({ type: "run", program: "steps", input: { count: 1 }, session_id: sessionId }, "session"),
    );
    expect(busy.code).toBe("session_busy");
    expect(busy.message).toMatch(/running on replica \S+/);
    onA.send({ type: "answer", question_id: question.question_id, value: "red" });
    await onA.next("turn_done", (frame) => frame.result === "picked red");
    onB.send({ type: "run", program: "steps", input: { count: 1 }, session_id: sessionId });
    expect((await onB.next(["turn_done", "error"])).type).toBe("turn_done");
  });

  it("a subscriber on B sees the turn on A frame for frame, in order, and the session list is the same on both", async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    asFrame(await onA.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    onA.send({ type: "run", program: "steps", input: { count: 8 }, session_id: sessionId });
    const done = await onA.next("turn_done", (frame) => frame.session_id === sessionId && frame.result === 56);
    await onB.next("turn_done", (frame) => frame.turn_id === done.turn_id);
    const seenOnA = turnFrames(onA, sessionId, done.turn_id);
    const seenOnB = turnFrames(onB, sessionId, done.turn_id);
    expect(seenOnA.length).toBeGreaterThan(18);
    expect(seenOnB).toEqual(seenOnA);

    const listA = asFrame(await onA.request({ type: "list_sessions" }, "sessions"), "sessions");
    const listB = asFrame(await onB.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(listB.sessions).toEqual(listA.sessions);
    expect(listA.sessions.map((session) => session.id)).toContain(sessionId);
  });

  it("answer, an invalid answer, decline and stop sent to B reach the turn on A; subscribe on B re-delivers the pending question", async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    onA.send({ type: "run", program: "ask_color", session_id: sessionId });
    await onA.next("session");
    const question = await onA.next("question");
    // Subscribing after the question was asked: B re-delivers it, as A would.
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    expect(await onB.next("question")).toEqual(question);
    const subscribed = onB.frames.find((frame) => frame.type === "subscribed");
    expect(subscribed).toMatchObject({ busy: true });

    const invalid = asError(
      await onB.request({ type: "answer", question_id: question.question_id, value: "green" }, "question_closed"),
    );
    expect(invalid.code).toBe("invalid_answer");
    onB.send({ type: "answer", question_id: question.question_id, value: "blue" });
    const answered = await onA.next("turn_done");
    expect(answered).toMatchObject({ session_id: sessionId, result: "picked blue" });
    // By turn id: newSession's turn_done, relayed late under load, can reach B after its subscribe.
    expect(await onB.next("turn_done", (frame) => frame.turn_id === answered.turn_id)).toMatchObject({
      session_id: sessionId,
      result: "picked blue",
    });

    onA.send({ type: "run", program: "ask_color", session_id: sessionId });
    await onA.next("session");
    const second = await onA.next("question", (frame) => frame.question_id !== question.question_id);
    await onB.next("question", (frame) => frame.question_id === second.question_id);
    onB.send({ type: "decline", question_id: second.question_id, reason: "not now" });
    expect(await onA.next("turn_failed")).toMatchObject({ session_id: sessionId, error: { code: "user_declined" } });

    onA.send({ type: "run", program: "wait_for_stop", session_id: sessionId });
    const waiting = await onA.next("session", (frame) => frame.session_id === sessionId);
    await onB.next("session", (frame) => frame.turn_id === waiting.turn_id);
    onB.send({ type: "stop", session_id: sessionId });
    const stopped = await onA.next("turn_failed", (frame) => frame.error.code === "cancelled");
    expect(stopped.session_id).toBe(sessionId);
    const none = asError(await onB.request({ type: "stop", session_id: sessionId }, "subscribed"));
    expect(none.code).toBe("no_running_turn");
  });

  it("an answer sent to B with one session's id and another's question is refused there; the right pair is answered and confirmed", async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const onA = await a.connect();
    const onB = await b.connect();
    const first = await newSession(onA);
    const second = await newSession(onA);
    onA.send({ type: "run", program: "ask_color", session_id: first });
    const asked = await onA.next("question", (frame) => frame.session_id === first);
    onA.send({ type: "run", program: "ask_color", session_id: second });
    await onA.next("question", (frame) => frame.session_id === second);
    // Refused on B when its mirror already knows the question's session, else on A, where it was forwarded to.
    const mismatch = await onB.refused({
      type: "answer",
      session_id: second,
      question_id: asked.question_id,
      value: "red",
      client_msg_id: "cross",
    });
    expect(mismatch).toMatchObject({ code: "question_session_mismatch", ref: "cross" });
    onB.send({ type: "answer", session_id: first, question_id: asked.question_id, value: "blue" });
    expect(await onB.next("question_closed")).toMatchObject({
      session_id: first,
      question_id: asked.question_id,
      outcome: "answered",
    });
    expect(await onA.next("turn_done", (frame) => frame.session_id === first)).toMatchObject({ result: "picked blue" });
  });

  it("a frame over NOTIFY's 8000 bytes reaches B whole, in its place", async () => {
    const [a, b] = [await startReplica(), await startReplica()];
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    onA.send({ type: "run", program: "big_result", session_id: sessionId });
    const started = await onA.next("session", (frame) => frame.session_id === sessionId);
    const done = await onB.next("turn_done", (frame) => frame.turn_id === started.turn_id);
    expect(done.result === "x".repeat(20_000)).toBe(true);
    await onA.next("turn_done", (frame) => frame.turn_id === started.turn_id);
    expect(summary(turnFrames(onB, sessionId, started.turn_id))).toEqual(
      summary(turnFrames(onA, sessionId, started.turn_id)),
    );
    const stored = await database.sql<{ n: number }>("SELECT count(*)::int AS n FROM openprogram_event_payloads");
    expect(stored.rows[0]?.n).toBeGreaterThan(0);
  });

  it("a lease left by a dead replica blocks the session until it expires, then any replica runs it", async () => {
    const b = await startReplica();
    const onB = await b.connect();
    const sessionId = await newSession(onB);
    await database.sql(
      `INSERT INTO openprogram_session_leases (session_id, owner, expires_at)
         VALUES ($1, 'dead-replica', now() + interval '800 milliseconds')
       ON CONFLICT (session_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at`,
      [sessionId],
    );
    const busy = asError(
      await onB.request({ type: "run", program: "steps", input: { count: 1 }, session_id: sessionId }, "session"),
    );
    expect(busy.message).toContain("dead-replica");
    await new Promise((resolve) => setTimeout(resolve, 900));
    onB.send({ type: "run", program: "steps", input: { count: 1 }, session_id: sessionId });
    expect((await onB.next(["turn_done", "error"])).type).toBe("turn_done");
    const leases = await database.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM openprogram_session_leases WHERE session_id = $1",
      [sessionId],
    );
    expect(leases.rows[0]?.n).toBe(0);
  });
});

describe("database outage", () => {
  it("readiness fails with the reason while the database is unreachable, and recovers when it is back", async () => {
    const a = await startReplica();
    expect((await httpGet(`${a.dispatcher.url}/readyz`)).status).toBe(200);
    await database.cutOff();
    try {
      const down = await httpGet(`${a.dispatcher.url}/readyz`);
      expect(down.status).toBe(503);
      expect(down.body).toMatch(/cluster database/);
    } finally {
      await database.restore();
    }
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await httpGet(`${a.dispatcher.url}/readyz`)).status;
    }
    expect(status).toBe(200);
  });

  it("an outage mid-turn fails the turn's coordination cleanly (lease_lost), its record committed; the replica reconnects", async () => {
    const a = await startReplica(900);
    const onA = await a.connect();
    const sessionId = await newSession(onA);
    onA.send({ type: "run", program: "wait_for_stop", session_id: sessionId });
    await onA.next("session");
    await onA.next("status", (frame) => frame.status === "running");
    await database.cutOff();
    try {
      const failed = await onA.next("turn_failed");
      expect(failed.session_id).toBe(sessionId);
      expect(a.logs.some((entry) => entry.event === "lease_lost")).toBe(true);
    } finally {
      await database.restore();
    }
    // The turn's own writes are in git: the session is idle on disk, its turn committed.
    const list = asFrame(await onA.request({ type: "list_sessions" }, "sessions"), "sessions");
    expect(list.sessions.find((session) => session.id === sessionId)?.status).not.toBe("running");
    let ran = false;
    for (let attempt = 0; attempt < 60 && !ran; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      onA.send({ type: "run", program: "steps", input: { count: 1 }, session_id: sessionId });
      ran = (await onA.next(["turn_done", "error"])).type === "turn_done";
    }
    expect(ran).toBe(true);
  });
});

describe("dead replicas", () => {
  it("sweeps racing on several replicas mark each dead replica gone exactly once, free its expired leases, and keep live ones", async () => {
    const fresh = await createTestDatabase();
    onCleanup(() => fresh.drop());
    const setupClient = new pg.Client({ connectionString: fresh.url });
    await setupClient.connect();
    await migrate(setupClient);
    await setupClient.end();
    const dead = Array.from({ length: 20 }, (_, index) => `dead-${index}`);
    for (const [index, id] of dead.entries()) {
      await fresh.sql(
        `INSERT INTO openprogram_replicas (id, host, pid, url, heartbeat_at)
           VALUES ($1, 'gone-host', $2, 'http://gone', now() - interval '1 minute')`,
        [id, 1000 + index],
      );
      await fresh.sql(
        `INSERT INTO openprogram_session_leases (session_id, owner, expires_at)
           VALUES ($1, $2, now() - interval '30 seconds')`,
        [`session_of_${id}`, id],
      );
    }
    // A live replica's row and its unexpired lease stay.
    await fresh.sql(
      `INSERT INTO openprogram_replicas (id, host, pid, url) VALUES ('live', 'live-host', 7, 'http://live')`,
    );
    await fresh.sql(
      `INSERT INTO openprogram_session_leases (session_id, owner, expires_at) VALUES ('busy', 'live', now() + interval '1 minute')`,
    );
    const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: fresh.url, max: 2 }));
    onCleanup(() => Promise.all(pools.map(endPool)).then(() => undefined));
    const sweepers = pools.map((pool, index) => new ReplicaRegistry(pool, fresh.url, `sweeper-${index}`, 2_000));
    const marked = (await Promise.all(sweepers.map((sweeper) => sweeper.sweep()))).flat();
    expect(marked.map((row) => row.id).sort()).toEqual([...dead].sort());
    expect(marked.every((row) => row.silent_ms >= 59_000)).toBe(true);
    // A second round finds nothing more to mark.
    expect((await Promise.all(sweepers.map((sweeper) => sweeper.sweep()))).flat()).toEqual([]);
    const rows = await fresh.sql<{ id: string; gone: boolean }>(
      "SELECT id, gone_at IS NOT NULL AS gone FROM openprogram_replicas ORDER BY id",
    );
    expect(rows.rows.filter((row) => row.gone).map((row) => row.id)).toHaveLength(20);
    expect(rows.rows.find((row) => row.id === "live")?.gone).toBe(false);
    const leases = await fresh.sql<{ session_id: string }>("SELECT session_id FROM openprogram_session_leases");
    expect(leases.rows.map((row) => row.session_id)).toEqual(["busy"]);

    // For the core's question about a lease file's process: a live row with the same host and pid wins over a gone
    // one (a restarted replica that got its predecessor's pid); a gone one alone is dead; an unknown one unknown.
    await fresh.sql(
      `INSERT INTO openprogram_replicas (id, host, pid, url) VALUES ('reborn', 'gone-host', 1000, 'http://reborn')`,
    );
    const watcher = sweepers[1] as ReplicaRegistry;
    await watcher.join("http://watcher");
    onCleanup(() => watcher.leave());
    expect(watcher.liveness("gone-host", 1000)).toBe(true);
    expect(watcher.liveness("gone-host", 1001)).toBe(false);
    expect(watcher.liveness("nowhere", 1)).toBeUndefined();

    // Gone rows are removed once their retention has passed.
    await fresh.sql(
      `UPDATE openprogram_replicas SET gone_at = now() - $1 * interval '1 millisecond' - interval '1 minute'
                      WHERE id = 'dead-0'`,
      [GONE_RETENTION_MS],
    );
    await (sweepers[0] as ReplicaRegistry).sweep();
    const left = await fresh.sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM openprogram_replicas WHERE id LIKE 'dead-%'",
    );
    expect(left.rows[0]?.n).toBe(19);
  });

  it("a replica marked gone while it was only stalled comes back at its next heartbeat", async () => {
    const id = `stalled-${randomBytes(4).toString("hex")}`;
    const a = await startReplica(600, { replicaId: id });
    const marked = await database.sql("UPDATE openprogram_replicas SET gone_at = now() WHERE id = $1", [id]);
    expect(marked.rowCount).toBe(1);
    await waitFor(
      async () => {
        const rows = await database.sql<{ gone: boolean }>(
          "SELECT gone_at IS NOT NULL AS gone FROM openprogram_replicas WHERE id = $1",
          [id],
        );
        return rows.rows[0]?.gone === false;
      },
      "the stalled replica's row back",
      10_000,
    );
    expect((await httpGet(`${a.dispatcher.url}/readyz`)).status).toBe(200);
  });
});

describe("event channel outage", () => {
  /**
   * A replica connecting as a role of its own, so that its event channel alone can be cut: its LISTEN backend is
   * terminated (pg_terminate_backend) while the role may not log in, so it stays down until `reopen`.
   */
  async function replicaWithOwnRole(
    runtime?: Runtime,
  ): Promise<Replica & { id: string; cut(): Promise<void>; reopen(): Promise<void> }> {
    const role = `openprogram_test_${randomBytes(4).toString("hex")}`;
    roles.push(role);
    await database.admin(`CREATE ROLE ${role} LOGIN SUPERUSER`);
    const url = new URL(database.url);
    url.username = role;
    const id = `replica-${role}`;
    const replica = await startReplica(2_000, {
      postgresUrl: url.toString(),
      replicaId: id,
      ...(runtime ? { runtime } : {}),
    });
    return {
      ...replica,
      id,
      cut: async () => {
        await database.admin(`ALTER ROLE ${role} NOLOGIN`);
        const ended = await database.admin(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
          [channelApplicationName(id)],
        );
        expect(ended.rowCount).toBe(1);
        await waitFor(
          () => replica.logs.some((entry) => entry.event === "cluster_channel_down"),
          "channel down",
          10_000,
        );
      },
      reopen: () => database.admin(`ALTER ROLE ${role} LOGIN`).then(() => undefined),
    };
  }

  /** What a page shows of the session: the snapshot after the last `resync`, with the node frames after it applied. */
  function shownNodes(client: TestClient, sessionId: string): Array<{ id: string; status: unknown; output: unknown }> {
    const frames = sessionFrames(client, sessionId).concat(
      client.frames.filter((frame) => frame.type === "session_detail" && frame.session_id === sessionId),
    );
    const ordered = client.frames.filter((frame) => frames.includes(frame));
    const last = ordered.map((frame) => frame.type).lastIndexOf("session_detail");
    const nodes = new Map<string, { id: string; status: unknown; output: unknown }>();
    for (const frame of ordered.slice(last)) {
      const list = frame.type === "session_detail" ? frame.nodes : frame.type === "node" ? [frame.node] : [];
      for (const node of list) nodes.set(node.id, { id: node.id, status: node.metadata.status, output: node.output });
    }
    return [...nodes.values()].sort((x, y) => x.id.localeCompare(y.id));
  }

  async function truthOf(
    client: TestClient,
    sessionId: string,
  ): Promise<Array<{ id: string; status: unknown; output: unknown }>> {
    const detail = asFrame(
      await client.request({ type: "get_session", session_id: sessionId }, "session_detail"),
      "session_detail",
    );
    return detail.nodes
      .map((node) => ({ id: node.id, status: node.metadata.status, output: node.output }))
      .sort((x, y) => x.id.localeCompare(y.id));
  }

  it("B's listening backend terminated while A's turns run: B re-syncs its subscriber (snapshot, the waiting question), logs it, and the client ends in the full state", async () => {
    const a = await startReplica();
    const b = await replicaWithOwnRole();
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    await b.cut();
    try {
      // While B hears nothing: a whole turn on A (its end never reaches B), then a turn that asks a question.
      onA.send({ type: "run", program: "steps", input: { count: 5 }, session_id: sessionId });
      const first = await onA.next("turn_done", (frame) => frame.session_id === sessionId && frame.result === 20);
      onA.send({ type: "run", program: "ask_color", session_id: sessionId });
      const question = await onA.next("question", (frame) => frame.session_id === sessionId);
      expect(onB.frames.some((frame) => "turn_id" in frame && frame.turn_id === first.turn_id)).toBe(false);
      expect(onB.frames.some((frame) => frame.type === "question")).toBe(false);
      await b.reopen();
      const resync = await onB.next("resync", (frame) => frame.session_id === sessionId);
      expect(resync.reason).toMatch(/event channel/);
      const detail = await onB.next("session_detail", (frame) => frame.session_id === sessionId);
      expect(detail.busy).toBe(true);
      // The question asked during the outage comes from the replica running the turn; B's client answers it.
      const again = await onB.next("question", (frame) => frame.question_id === question.question_id);
      expect(again).toEqual(question);
      const logged = b.logs.find((entry) => entry.event === "cluster_resync");
      expect(logged).toMatchObject({ level: "warn", sessions: 1, session_ids: [sessionId] });
      onB.send({ type: "answer", question_id: question.question_id, value: "red" });
      await onB.next("turn_done", (frame) => frame.session_id === sessionId && frame.result === "picked red");
      await onA.next("turn_done", (frame) => frame.session_id === sessionId && frame.result === "picked red");
      expect(shownNodes(onB, sessionId)).toEqual(await truthOf(onA, sessionId));
    } finally {
      await b.reopen();
    }
  });

  it("A's channel down while its turn runs: its frames to B are lost; once back, A names the session and B re-syncs it", async () => {
    const a = await replicaWithOwnRole();
    const b = await startReplica();
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    await a.cut();
    try {
      onA.send({ type: "run", program: "steps", input: { count: 6 }, session_id: sessionId });
      const done = await onA.next("turn_done", (frame) => frame.session_id === sessionId && frame.result === 30);
      expect(onB.frames.some((frame) => "turn_id" in frame && frame.turn_id === done.turn_id)).toBe(false);
      await a.reopen();
      await onB.next("resync", (frame) => frame.session_id === sessionId);
      // A's lease may outlive its turn (its release could not reach the database while A's role was shut out, and
      // it expires instead): then B's first snapshot says busy, and A's answer that no turn runs makes B send it again.
      const detail = await onB.next("session_detail", (frame) => frame.session_id === sessionId && !frame.busy);
      expect(detail).toMatchObject({ busy: false, session: { status: "idle" } });
      expect(b.logs.find((entry) => entry.event === "cluster_resync")?.reason).toContain(a.id);
      expect(shownNodes(onB, sessionId)).toEqual(await truthOf(onA, sessionId));
    } finally {
      await a.reopen();
    }
  });
  it("a reply streaming on A while B's channel is down: after the resync B's client has the text so far once, then the rest", async () => {
    const fake = await startFakeOpenAIServer();
    onCleanup(() => fake.close());
    const chunks = Array.from({ length: 80 }, (_, index) => `w${index} `);
    // The second half waits until B's client has its resync: however slow the machine, the reply is
    // still streaming then, which is the case under test (a reply that ended first is another test's).
    let releaseRest = (): void => undefined;
    const resynced = new Promise<void>((resolve) => (releaseRest = resolve));
    onCleanup(() => releaseRest());
    fake.setHandler(() => ({ chunks, chunkDelayMs: 25, holdAt: { chunk: 40, until: resynced } }));
    const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "m", maxRetries: 0 }) as Runtime;
    const a = await startReplica(2_000, { runtime });
    const b = await replicaWithOwnRole();
    const onA = await a.connect();
    const onB = await b.connect();
    const sessionId = await newSession(onA);
    asFrame(await onB.request({ type: "subscribe", session_id: sessionId }, "subscribed"), "subscribed");
    onA.send({ type: "chat", text: "hello", session_id: sessionId });
    const first = await onB.next("delta", (frame) => frame.session_id === sessionId);
    await b.cut();
    try {
      // Text streams on A meanwhile; B's client gets none of it.
      await new Promise((resolve) => setTimeout(resolve, 400));
    } finally {
      await b.reopen();
    }
    const resync = await onB.next("resync", (frame) => frame.session_id === sessionId);
    releaseRest();
    const from = onB.frames.indexOf(resync);
    // This chat's turn_done, after the resync: the relayed turn_done of newSession's turn can reach B after its
    // subscribe (relaying lags under load), before the outage.
    const done = await onB.next(
      "turn_done",
      (frame) => frame.session_id === sessionId && onB.frames.indexOf(frame) > from,
    );
    const after = onB.frames.slice(from, onB.frames.indexOf(done));
    const streamed = after
      .filter((frame) => frame.type === "delta" && frame.node_id === first.node_id)
      .map((frame) => (frame as { text: string }).text)
      .join("");
    // Cleared by resync, then the owner's text so far and the deltas after it: the whole reply, nothing twice.
    expect(streamed).toBe(chunks.join(""));
    const final = after.find(
      (frame) => frame.type === "node" && frame.node.id === first.node_id && frame.op === "update",
    );
    expect(final).toMatchObject({ node: { output: chunks.join("") } });
  });
});
