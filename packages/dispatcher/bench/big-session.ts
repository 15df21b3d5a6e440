// Issue 30, item 7: one big session under concurrent readers. Builds a session of N nodes (default 100,000) through
// the core, serves it, then CLIENTS clients each ask get_session READS times at once while /healthz is probed every
// 50 ms. Prints the first page's time and size, the readers' wall time, /healthz latency (p50, max) and the
// process's peak and final RSS. The server runs in this process: /healthz latency is the event loop's stall.
// Usage: tsx bench/big-session.ts [nodes] [clients] [reads]
import { request } from "node:http";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { agenticFunction, sessionContext } from "@openprogram/session-context";
import { describeSession, openStore } from "@openprogram/session-context/store";
import { WebSocket } from "ws";
import { createDispatcher } from "../src/index.js";

const NODES = Number(process.argv[2] ?? 100_000);
const CLIENTS = Number(process.argv[3] ?? 6);
const READS = Number(process.argv[4] ?? 3);
const BUILDING = process.argv[2] === "build";

const leaf = agenticFunction({ name: "leaf", doc: "A small step." }, async ({ n }: { n: number }) => `step ${n}`);
const many = agenticFunction({ name: "many", doc: "Many steps." }, async ({ count }: { count: number }) => {
  for (let n = 0; n < count; n++) await leaf({ n });
  return "done";
});

function healthz(url: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(`${url}/healthz`, (response) => {
      response.resume();
      response.on("end", () => resolve(performance.now() - started));
    })
      .on("error", reject)
      .end();
  });
}

async function client(
  wsUrl: string,
): Promise<{ ask(): Promise<{ ms: number; bytes: number; code?: string }>; close(): void }> {
  const socket = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  return {
    ask: () =>
      new Promise((resolve) => {
        const started = performance.now();
        socket.once("message", (data: Buffer) => {
          const frame = JSON.parse(data.toString()) as { type: string; code?: string };
          resolve({ ms: performance.now() - started, bytes: data.length, ...(frame.code ? { code: frame.code } : {}) });
        });
        socket.send(JSON.stringify({ type: "get_session", session_id: "big_session" }));
      }),
    close: () => socket.close(),
  };
}

const quantile = (values: number[], q: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

/** In a child process: writes the session under `root`, so the serving process reads it cold. */
async function build(root: string, count: number): Promise<void> {
  const db = openStore({ root });
  // Turns of 10,000 steps: one turn of 100,000 would hold its whole history in one commit.
  for (let done = 0; done < count; done += 10_000)
    await sessionContext({ sessionId: "big_session", db, runtime: null }, () =>
      many({ count: Math.min(10_000, count - done) }),
    );
}

if (BUILDING) await build(process.argv[3] as string, Number(process.argv[4]));
else await measure();

async function measure(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "openprogram-bench-big-session-"));
  try {
    const building = performance.now();
    const built = spawnSync(
      process.execPath,
      [...process.execArgv, fileURLToPath(import.meta.url), "build", root, String(NODES)],
      { stdio: "inherit" },
    );
    if (built.status !== 0) throw new Error(`building the session failed (${String(built.status)})`);
    const db = openStore({ root });
    const dispatcher = await createDispatcher({ port: 0, db, runtime: null });
    process.stdout.write(`built a session in ${((performance.now() - building) / 1000).toFixed(1)} s\n`);
    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
    const first = await client(dispatcher.wsUrl);
    const page = await first.ask();
    process.stdout.write(`first get_session, cold: ${page.ms.toFixed(0)} ms, ${page.bytes} bytes\n`);
    const coreStarted = performance.now();
    const detail = await describeSession("big_session", { db });
    process.stdout.write(
      `${detail.nodes.length} nodes; the core's describeSession right after (warm): ${(performance.now() - coreStarted).toFixed(0)} ms\n`,
    );
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => client(dispatcher.wsUrl)));
    const probes: number[] = [];
    let probing = true;
    const probe = (async () => {
      while (probing) {
        probes.push(await healthz(dispatcher.url));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const started = performance.now();
    const answers = (
      await Promise.all(
        clients.map(async (reader) => {
          const got = [];
          for (let read = 0; read < READS; read++) got.push(await reader.ask());
          return got;
        }),
      )
    ).flat();
    const wall = performance.now() - started;
    probing = false;
    await probe;
    clearInterval(sampler);
    const refused = answers.filter((answer) => answer.code !== undefined).length;
    process.stdout.write(
      `${CLIENTS} clients x ${READS} get_session: ${(wall / 1000).toFixed(1)} s, ${refused} refused, ` +
        `largest frame ${Math.max(...answers.map((answer) => answer.bytes))} bytes\n` +
        `/healthz meanwhile: p50 ${quantile(probes, 0.5).toFixed(0)} ms, max ${Math.max(...probes).toFixed(0)} ms (${probes.length} probes)\n` +
        `rss peak ${(peakRss / 2 ** 20).toFixed(0)} MiB, after ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB\n`,
    );
    for (const reader of [first, ...clients]) reader.close();
    await dispatcher.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
