// A client that stops reading while a long reply streams to it: the dispatcher (a real child
// process serving a scripted model that streams about 19 MB) closes it with 4008 once its unread
// frames pass the limit, the turn goes on, and the server's peak RSS stays where it is when every
// client reads.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openStore } from "@openprogram/session-context";
import { waitFor } from "@openprogram/session-context/testing";
import { afterEach, expect, it } from "vitest";
import { CLOSE_TOO_SLOW } from "../src/index.js";
import { closeAll, onCleanup, serveInChild, TestClient } from "./helpers.js";

afterEach(closeAll);

const CHILD = fileURLToPath(new URL("./fixtures/serve-child.mjs", import.meta.url));
const TOKEN = "slow-client-test-token-0123456789";
const LIMIT = 1024 * 1024;
const CHUNK = "x".repeat(16 * 1024 - 1) + " ";
const CHUNKS = 1200;
const REPLY_BYTES = CHUNK.length * CHUNKS;

/** Peak resident memory of a live process (Linux), in bytes. */
function peakRss(pid: number): number {
  const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Serves a scripted model streaming one long reply; chats on a client; `stall` stops it reading at once. */
async function streamTo(stall: boolean): Promise<{ peak: number; closed: { code: number; reason: string } | null }> {
  const script = join(tmpdir(), `slow-client-${process.pid}-${String(stall)}.json`);
  onCleanup(() => rmSync(script, { force: true }));
  writeFileSync(script, JSON.stringify([{ chunks: Array.from({ length: CHUNKS }, () => CHUNK), chunkDelayMs: 1 }]));
  const served = await serveInChild(CHILD, {
    OPENPROGRAM_PROVIDER: "scripted",
    OPENPROGRAM_SCRIPT: script,
    OPENPROGRAM_MAX_UNSENT_BYTES: String(LIMIT),
    OPENPROGRAM_TOKEN: TOKEN,
  });
  const client = await TestClient.connect(`${served.wsUrl}?token=${TOKEN}`);
  onCleanup(() => client.close());
  client.send({ type: "chat", text: "Tell me everything." });
  let closed: { code: number; reason: string } | null = null;
  if (stall) {
    client.socket.pause();
    await served.event("client_too_slow");
    client.socket.resume();
    closed = await client.waitClosed();
  }
  const end = await served.event("turn_end");
  expect(end).toMatchObject({ outcome: "done" });
  if (!stall) expect((await client.next("turn_done")).result).toHaveLength(REPLY_BYTES);
  const peak = peakRss(served.child.pid as number);
  // The turn went on to the end either way: the reply is recorded whole.
  const db = openStore({ root: join(served.home, "sessions") });
  const [session] = await db.listSessions();
  await waitFor(async () => (await db.getSession(session?.id ?? ""))?.status === "idle", "the session to be idle");
  const llm = (await db.loadNodes(session?.id ?? "")).find((node) => node.role === "llm");
  expect(llm?.metadata.status).toBe("completed");
  expect((llm?.output as string).length).toBe(REPLY_BYTES);
  return { peak, closed };
}

// Two servers each stream 19 MB (about 1,200 chunks 1 ms apart); over 60 s once with the machine
// loaded 25x by other work. The reply must be large for the RSS check to mean anything, so the
// timeout (a bound on a hang) is what grows: 180 s.
it(
  "closes a client that stops reading with 4008 past its limit; the turn goes on and RSS stays bounded",
  { timeout: 180_000 },
  async () => {
    const reading = await streamTo(false);
    const stalled = await streamTo(true);
    expect(stalled.closed).toEqual({
      code: CLOSE_TOO_SLOW,
      reason: `too slow: more than ${LIMIT} bytes of frames unread`,
    });
    // Had the server kept queueing for the stalled client, its peak would be most of the reply (19 MB) higher.
    expect(stalled.peak - reading.peak).toBeLessThan(REPLY_BYTES / 2);
  },
);
