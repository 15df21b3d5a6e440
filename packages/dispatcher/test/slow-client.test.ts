// A client that stops reading while a long reply streams to it: the dispatcher (a real child
// process serving a scripted model that streams about 10 MB) closes it with 4008 once its unread
// frames pass the limit, during the stream; the turn goes on; and the server holds no more memory
// than when every client reads. A control server whose limit is above the reply keeps the stalled
// client's frames, which shows the memory probe sees them.
import { rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "@openprogram/session-context/store";
import { waitFor } from "@openprogram/session-context/testing";
import { afterEach, expect, it } from "vitest";
import { CLOSE_TOO_SLOW } from "../src/index.js";
import { closeAll, onCleanup, serveInChild, TestClient, type ServedChild } from "./helpers.js";

afterEach(closeAll);

const CHILD = fileURLToPath(new URL("./fixtures/serve-child-memory.mjs", import.meta.url));
const TOKEN = "slow-client-test-token-0123456789";
const LIMIT = 256 * 1024;
const CHUNK = "x".repeat(16 * 1024 - 1) + " ";
const CHUNKS = 600;
const REPLY_BYTES = CHUNK.length * CHUNKS;

/** How long a stream may take (a bound on a hang). */
const STREAM_WAIT_MS = 150_000;

type Reader = "reading" | "stalled";

interface Streamed {
  /** Heap and Buffers the server still holds at the end of the turn, after a full collection. */
  live: number;
  closed: { code: number; reason: string } | null;
  /** True when the server closed the client before the turn ended (the bound held during the stream). */
  closedDuringStream: boolean;
}

/** Asks the child for its live memory (full GC first) and waits for the answer. */
async function liveMemory(served: ServedChild): Promise<number> {
  served.child.kill("SIGUSR2");
  return Number((await served.event("memory_probe")).live);
}

function lineIndex(served: ServedChild, event: string): number {
  return served.lines.findIndex((line) => (JSON.parse(line) as { event?: string }).event === event);
}

/** Serves a scripted model streaming one long reply to one client, which reads it or stops reading at once. */
async function streamTo(reader: Reader, maxUnsentBytes: number): Promise<Streamed> {
  const script = join(tmpdir(), `slow-client-${process.pid}-${reader}-${maxUnsentBytes}.json`);
  onCleanup(() => rmSync(script, { force: true }));
  writeFileSync(script, JSON.stringify([{ chunks: Array.from({ length: CHUNKS }, () => CHUNK), chunkDelayMs: 1 }]));
  const served = await serveInChild(CHILD, {
    OPENPROGRAM_PROVIDER: "scripted",
    OPENPROGRAM_SCRIPT: script,
    OPENPROGRAM_MAX_UNSENT_BYTES: String(maxUnsentBytes),
    OPENPROGRAM_TOKEN: TOKEN,
  });
  const client = await TestClient.connect(`${served.wsUrl}?token=${TOKEN}`);
  onCleanup(() => client.close());
  client.send({ type: "chat", text: "Tell me everything." });
  if (reader === "stalled") client.socket.pause();
  let closed: { code: number; reason: string } | null = null;
  if (reader === "stalled" && maxUnsentBytes < REPLY_BYTES) {
    // Resumed as soon as the server gives up on it: the close frame waits behind the unread frames, and past
    // ws's close timeout (30 s, which a loaded machine reaches) the server drops the socket without it.
    await served.event("client_too_slow", STREAM_WAIT_MS);
    client.socket.resume();
    closed = await client.waitClosed();
  }
  // The stream takes about 1 s on a quiet machine and over a minute when it is loaded 25x.
  const end = await served.event("turn_end", STREAM_WAIT_MS);
  expect(end).toMatchObject({ outcome: "done" });
  // A reading client is measured once it has every frame (nothing left queued for it); the control's stalled
  // client while it still reads nothing, so whatever the server queued for it is still held.
  if (reader === "reading") expect((await client.next("turn_done")).result).toHaveLength(REPLY_BYTES);
  const live = await liveMemory(served);
  const tooSlow = lineIndex(served, "client_too_slow");
  client.socket.resume();
  // The turn went on to the end either way: the reply is recorded whole.
  const db = openStore({ root: join(served.home, "sessions") });
  const [session] = await db.listSessions();
  await waitFor(async () => (await db.getSession(session?.id ?? ""))?.status === "idle", "the session to be idle");
  const llm = (await db.loadNodes(session?.id ?? "")).find((node) => node.role === "llm");
  expect(llm?.metadata.status).toBe("completed");
  expect((llm?.output as string).length).toBe(REPLY_BYTES);
  return { live, closed, closedDuringStream: tooSlow >= 0 && tooSlow < lineIndex(served, "turn_end") };
}

// Three servers each stream 10 MB (600 chunks 1 ms apart): about 10 s on a quiet machine; one stream
// took over 60 s with the machine loaded 20x by other work. The reply must be large for the memory
// check to mean anything, so the timeout (a bound on a hang) is what grows: 300 s.
it(
  "closes a client that stops reading with 4008 past its limit; the turn goes on and memory stays bounded",
  { timeout: 300_000 },
  async () => {
    // The baseline's limit is above the reply: a reader that lags on a loaded machine is not closed.
    const reading = await streamTo("reading", 4 * REPLY_BYTES);
    const stalled = await streamTo("stalled", LIMIT);
    expect(stalled.closedDuringStream).toBe(true);
    expect(stalled.closed).toEqual({
      code: CLOSE_TOO_SLOW,
      reason: `too slow: more than ${LIMIT} bytes of frames unread`,
    });
    // Had the server kept queueing for the stalled client, it would hold most of the reply (10 MB) more.
    expect(stalled.live - reading.live).toBeLessThan(REPLY_BYTES / 2);

    // Control: with a limit above the reply the stalled client is never closed, and the probe sees its frames.
    const unbounded = await streamTo("stalled", 4 * REPLY_BYTES);
    expect(unbounded.closedDuringStream).toBe(false);
    expect(unbounded.live - reading.live).toBeGreaterThan(REPLY_BYTES / 2);
  },
);
