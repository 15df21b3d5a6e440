// Long replies do not stay in the server's memory once their sessions are idle: a real dispatcher
// (a child process whose memory probe runs a full collection) answers, over loopback, a dozen sessions
// whose first reply is 8 MB and whose second turn counts that history's tokens (so the history is
// over the model's window, compacted, and its texts pass through the token counts). The server then
// holds no more than the store's cache of idle sessions (MAX_CACHED_HISTORY_BYTES) and a few replies;
// before that cache had a byte limit, and before the token counts stopped keeping long texts, it held
// every reply, some of them twice.
import { fileURLToPath } from "node:url";
import { MAX_CACHED_HISTORY_BYTES } from "@openprogram/session-context/store";
import { startFakeOpenAIServer, type FakeOpenAIServer } from "@openprogram/session-context/testing";
import { afterEach, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { closeAll, onCleanup, serveInChild, TestClient, type ServedChild } from "./helpers.js";

afterEach(closeAll);

const CHILD = fileURLToPath(new URL("./fixtures/serve-child-memory.mjs", import.meta.url));
const TOKEN = "reply-memory-test-token-0123456789";
const MB = 1024 * 1024;
const REPLY_BYTES = 8 * MB;
const SESSIONS = 12;
const CHUNK_BYTES = 16 * 1024;

/** About REPLY_BYTES of words (numbered, so the token counts see real text), in stream chunks. */
function longReply(session: number): string[] {
  const chunks: string[] = [];
  for (let index = 0; index * CHUNK_BYTES < REPLY_BYTES; index++) {
    let chunk = index === 0 ? `reply ${session}:` : "";
    for (let word = index; chunk.length < CHUNK_BYTES - 8; word = (word * 31 + 7) % 5000) chunk += ` w${word}`;
    chunks.push(chunk);
  }
  return chunks;
}

/** Asks the child for its live memory (heap and Buffers after a full collection). */
async function liveMemory(served: ServedChild): Promise<number> {
  const before = served.lines.length;
  served.child.kill("SIGUSR2");
  for (;;) {
    const line = served.lines.slice(before).find((text) => text.includes('"memory_probe"'));
    if (line) return Number((JSON.parse(line) as { live: number }).live);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** One chat turn; resolves with the session's id at turn_done. Keeps no frame (TestClient keeps them all). */
function chat(socket: WebSocket, text: string, sessionId?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer): void => {
      const frame = JSON.parse(data.toString("utf8")) as { type: string; session_id: string };
      if (frame.type !== "turn_done" && frame.type !== "turn_failed" && frame.type !== "error") return;
      socket.off("message", onMessage);
      if (frame.type === "turn_done") resolve(frame.session_id);
      else reject(new Error(`the turn ended with ${JSON.stringify(frame)}`));
    };
    socket.on("message", onMessage);
    socket.send(JSON.stringify({ type: "chat", text, ...(sessionId ? { session_id: sessionId } : {}) }));
  });
}

// Twelve sessions of two turns (one 8 MB reply, one count and compaction of it): about 40 s on a quiet
// machine; the timeout is a bound on a hang on a machine loaded many times over.
it("keeps no idle session's long reply beyond the store's bounded cache", { timeout: 600_000 }, async () => {
  let session = 0;
  const fake: FakeOpenAIServer = await startFakeOpenAIServer((request) => {
    const system = request.json.messages?.find((message) => message.role === "system")?.content ?? "";
    if (system.includes("compress the earlier part of a conversation")) return "A short summary.";
    const last = request.json.messages?.at(-1)?.content ?? "";
    return last.includes("everything") ? { chunks: longReply(session) } : "Fine.";
  });
  onCleanup(() => fake.close());
  const served = await serveInChild(CHILD, {
    OPENPROGRAM_PROVIDER: "openai",
    OPENAI_BASE_URL: fake.baseUrl,
    OPENAI_API_KEY: "test-key",
    OPENPROGRAM_MODEL: "gpt-4o-mini",
    OPENPROGRAM_CONTEXT_WINDOW: "128000",
    OPENPROGRAM_MAX_RETRIES: "0",
    OPENPROGRAM_MAX_UNSENT_BYTES: String(256 * MB),
    OPENPROGRAM_TOKEN: TOKEN,
  });
  const client = await TestClient.connect(`${served.wsUrl}?token=${TOKEN}`);
  onCleanup(() => client.close());
  const socket = client.socket;
  socket.removeAllListeners("message");

  const live: number[] = [];
  for (session = 1; session <= SESSIONS; session++) {
    const sessionId = await chat(socket, "Tell me everything.");
    await chat(socket, "And in short?", sessionId);
    // The fake server keeps what it received (the 8 MB transcripts): not this test's subject.
    fake.requests.length = 0;
    live.push(await liveMemory(served));
  }
  // After the first session the server has loaded the tokenizer and holds one reply; every later one
  // may add at most the store cache's limit in all, and the session it just answered.
  const grown = (live.at(-1) as number) - (live[0] as number);
  expect(
    grown,
    `live memory after each session (MB): ${live.map((bytes) => Math.round(bytes / MB)).join(", ")}`,
  ).toBeLessThan(MAX_CACHED_HISTORY_BYTES + 2 * REPLY_BYTES);
});
