// Issue 36: provider limits across a cluster, coordinated in the real PostgreSQL (a fresh database, dropped after).
// Three dispatchers, each its own pool and replica id, share `"limits": { "openai/m": { "maxConcurrent": 2 } }`:
// ten sessions' turns spread over them never have more than two requests in flight at the fake provider, and every
// one is served. A replica that stops renewing (it died) gives its slots back within the lease time; a process
// killed with SIGKILL does too.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { agenticFunction } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  removeTree,
  startFakeOpenAIServer,
  waitFor,
  type FakeOpenAIServer,
} from "@openprogram/session-context/testing";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { PostgresCapacity } from "../../src/cluster/capacity.js";
import { createPool } from "../../src/cluster/pool.js";
import { createDispatcher, migrate } from "../../src/index.js";
import { TestClient } from "../../src/testing/index.js";
import { closeAll, onCleanup } from "../helpers.js";
import { createTestDatabase, endPool, TEST_CLUSTER_SECRET, type TestDatabase } from "./test-database.js";

const TTL_MS = 1_500;
const SESSIONS = 10;
/** How long the provider holds each request: long enough for the replicas' requests to overlap if allowed. */
const HOLD_MS = 200;

const ask = agenticFunction({ name: "ask", doc: "Answer the question." }, async (input: { n: number }, { runtime }) =>
  runtime.exec(`question ${input.n}`),
);

let database: TestDatabase;
let root: string;
const pools: pg.Pool[] = [];
const stores: PostgresCapacity[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  root = mkdtempSync(join(tmpdir(), "openprogram-capacity-"));
  const pool = createPool(database.url, 2, () => undefined);
  pools.push(pool);
  const client = await pool.connect();
  try {
    await migrate(client);
  } finally {
    client.release();
  }
});
afterAll(async () => {
  for (const store of stores) store.stop();
  await Promise.all(pools.map((pool) => endPool(pool)));
  await database.drop();
  removeTree(root);
});
afterEach(closeAll);

/** A replica's capacity store on its own pool, as a dispatcher has it. */
function replicaStore(owner: string): PostgresCapacity {
  const pool = createPool(database.url, 4, () => undefined);
  pools.push(pool);
  const store = new PostgresCapacity(pool, database.url, owner, TTL_MS);
  stores.push(store);
  return store;
}

describe("provider limits across replicas", () => {
  let server: FakeOpenAIServer;
  let inFlight = 0;
  let most = 0;

  it("maxConcurrent 2 over three replicas, ten sessions: never more than 2 in flight at the provider, all served", async () => {
    server = await startFakeOpenAIServer(async (request) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      inFlight--;
      return `ok ${request.json.messages?.at(-1)?.content ?? ""}`;
    });
    onCleanup(() => server.close());
    const runtime = createRuntime({
      provider: "openai",
      apiKey: "k",
      baseUrl: server.baseUrl,
      model: "m",
      maxRetries: 0,
    });
    const replicas = await Promise.all(
      ["r1", "r2", "r3"].map(async (replicaId) => {
        const dispatcher = await createDispatcher({
          port: 0,
          sessionsRoot: root,
          runtime,
          programs: { ask },
          log: () => undefined,
          providerLimits: { "openai/m": { maxConcurrent: 2 } },
          cluster: {
            postgresUrl: database.url,
            leaseTtlMs: TTL_MS,
            poolSize: 4,
            replicaId,
            secrets: [TEST_CLUSTER_SECRET],
          },
        });
        onCleanup(() => dispatcher.close());
        return dispatcher;
      }),
    );
    const clients = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, n) => {
        const client = await TestClient.connect((replicas[n % 3] as (typeof replicas)[number]).wsUrl);
        onCleanup(() => client.close());
        return client;
      }),
    );
    const results = await Promise.all(
      clients.map(async (client, n) => {
        client.send({ type: "run", program: "ask", input: { n } });
        const done = await client.next(["turn_done", "error"]);
        return done.type === "turn_done" ? done.result : done;
      }),
    );
    expect(results).toEqual(Array.from({ length: SESSIONS }, (_, n) => `ok question ${n}`));
    expect(server.requests).toHaveLength(SESSIONS);
    expect(most).toBe(2);
    // Every slot was given back.
    const held = await database.sql<{ count: string }>(
      "SELECT count(*) FROM openprogram_capacity_slots WHERE in_flight",
    );
    expect(held.rows[0]?.count).toBe("0");
  });

  it("a replica that stops renewing (it died) gives its slots back within the lease; a live one keeps them", async () => {
    const [live, dying, waiting] = [replicaStore("live"), replicaStore("dying"), replicaStore("waiting")];
    live.start();
    const one = { maxConcurrent: 1 };
    expect(await live.tryAcquire("held-live", one, 10, Date.now())).toMatchObject({ granted: true });
    expect(await dying.tryAcquire("held-dead", one, 10, Date.now())).toMatchObject({ granted: true });
    expect(await waiting.tryAcquire("held-dead", one, 10, Date.now())).toEqual({
      granted: false,
      limit: "maxConcurrent",
    });
    await waitFor(
      async () => (await waiting.tryAcquire("held-dead", one, 10, Date.now())).granted,
      "the dead replica's slot to expire",
      30_000,
    );
    // Well past the lease time, the live replica's renewed slot still counts.
    expect(await waiting.tryAcquire("held-live", one, 10, Date.now())).toEqual({
      granted: false,
      limit: "maxConcurrent",
    });
  });

  it("room goes to the replica that waited longest: one whose own request ends cannot take it again at once", async () => {
    const [busy, patient] = [replicaStore("busy"), replicaStore("patient")];
    const one = { maxConcurrent: 1 };
    const held = await busy.tryAcquire("line", one, 10, Date.now());
    if (!held.granted) throw new Error("the first request found no room");
    const waitedFrom = Date.now();
    expect(await patient.tryAcquire("line", one, 10, waitedFrom)).toEqual({ granted: false, limit: "maxConcurrent" });
    await busy.release(held.id, 10);
    // The busy replica's next caller began waiting after the patient one's: the free slot is not its.
    expect(await busy.tryAcquire("line", one, 10, waitedFrom + 5)).toEqual({ granted: false, limit: "maxConcurrent" });
    expect(await patient.tryAcquire("line", one, 10, waitedFrom)).toMatchObject({ granted: true });
  });

  it("a slot given back frees the room; per-minute limits count requests that began in the minute, released or not", async () => {
    const [first, second] = [replicaStore("m1"), replicaStore("m2")];
    const answer = await first.tryAcquire(
      "per-minute",
      { requestsPerMinute: 2, tokensPerMinute: 1000 },
      100,
      Date.now(),
    );
    expect(answer).toMatchObject({ granted: true });
    if (!answer.granted) return;
    await first.release(answer.id, 850); // used: replaces the estimate of 100
    expect(
      await second.tryAcquire("per-minute", { requestsPerMinute: 2, tokensPerMinute: 1000 }, 200, Date.now()),
    ).toEqual({
      granted: false,
      limit: "tokensPerMinute",
    });
    expect(
      await second.tryAcquire("per-minute", { requestsPerMinute: 2, tokensPerMinute: 1000 }, 100, Date.now()),
    ).toMatchObject({
      granted: true,
    });
    expect(await second.tryAcquire("per-minute", { requestsPerMinute: 2 }, 1, Date.now())).toEqual({
      granted: false,
      limit: "requestsPerMinute",
    });
  });

  it("a replica process killed with SIGKILL while a request is in flight gives its slot back within the lease", async () => {
    const waiting = replicaStore("after-kill");
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        fileURLToPath(new URL("./fixtures/hold-capacity.ts", import.meta.url)),
        database.url,
        "killed",
        String(TTL_MS),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    onTestFinished(() => {
      child.kill("SIGKILL");
    });
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`hold-capacity exited with ${String(code)}`)));
    });
    expect(JSON.parse(line)).toMatchObject({ granted: true });
    const one = { maxConcurrent: 1 };
    // While the process lives (and renews), its request stays in flight: past the lease time too.
    await new Promise((resolve) => setTimeout(resolve, TTL_MS + 500));
    expect(await waiting.tryAcquire("killed", one, 10, Date.now())).toEqual({ granted: false, limit: "maxConcurrent" });
    child.kill("SIGKILL");
    await exited;
    await waitFor(
      async () => (await waiting.tryAcquire("killed", one, 10, Date.now())).granted,
      "the killed replica's slot to expire",
      30_000,
    );
  });
});
