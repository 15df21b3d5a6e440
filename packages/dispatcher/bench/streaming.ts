// Benchmark of issue 15 (streaming):
// 1. time to first token through the dispatcher to a WebSocket client (send `chat` -> first `delta`),
//    beside the provider server's own time to first byte measured the same way by a raw HTTP client
//    in the same run, alternating; target <= 1.2x + 5 ms;
// 2. 50 clients each receiving a 2,000-token streamed reply at once: the server's CPU time per delta
//    frame delivered beside a bare `ws` server sending the same frames, its RSS, and a check that
//    every client got every token in order (no gap, no reorder, nothing twice).
import { fileURLToPath } from "node:url";
import { iterations, median, report } from "@openprogram/bench-kit";
import { startFakeOpenAIServer } from "@openprogram/session-context/testing";
import { WebSocket } from "ws";
import { startBenchChild, type BenchChild } from "./bench-child.js";
import { scriptedReply, type StreamingChildRequest, type Usage } from "./streaming-protocol.js";

const CHILD = fileURLToPath(new URL("./streaming-server.ts", import.meta.url));
const TTFT_SAMPLES = iterations(20);
const PROVIDER_DELAY_MS = 50;
const CLIENTS = 50;
const TOKENS = 2000;
const MiB = 1024 * 1024;

function startChild(args: string[]): Promise<BenchChild<StreamingChildRequest>> {
  return startBenchChild<StreamingChildRequest>(CHILD, args);
}

function openSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * Milliseconds from sending a chat frame to its first delta frame, and the turn's session; waits for the
 * turn to end. Without `sessionId` each chat starts a new session.
 */
function chatToFirstDelta(socket: WebSocket, sessionId?: string): Promise<{ ms: number; sessionId: string }> {
  return new Promise((resolve) => {
    let first: number | null = null;
    const started = performance.now();
    const onMessage = (data: Buffer): void => {
      const frame = JSON.parse(data.toString("utf8")) as { type: string; session_id?: string };
      if (frame.type === "delta" && first === null) first = performance.now() - started;
      if (frame.type === "turn_done" || frame.type === "turn_failed") {
        socket.off("message", onMessage);
        resolve({ ms: first ?? Number.NaN, sessionId: frame.session_id ?? "" });
      }
    };
    socket.on("message", onMessage);
    socket.send(
      JSON.stringify({ type: "chat", text: "Say something.", ...(sessionId ? { session_id: sessionId } : {}) }),
    );
  });
}

/** Milliseconds from sending a streaming request straight to the provider server to its first content chunk. */
async function providerFirstByte(baseUrl: string, body: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let first = Number.NaN;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString("utf8");
    if (Number.isNaN(first) && text.includes('"content":"w')) first = performance.now() - started;
  }
  return first;
}

async function timeToFirstToken(): Promise<void> {
  const provider = await startFakeOpenAIServer(() => ({
    chunks: Array.from({ length: 30 }, (_, index) => `w${index} `),
    delayMs: PROVIDER_DELAY_MS,
    chunkDelayMs: 2,
  }));
  const server = await startChild(["openai", provider.baseUrl]);
  const socket = await openSocket(`ws://127.0.0.1:${server.port}/ws`);
  // Warm-up: the SDK's import, a first session (continued below).
  const { sessionId: continued } = await chatToFirstDelta(socket);
  const body = provider.requests[0]?.body ?? "";
  await providerFirstByte(provider.baseUrl, body);
  const fresh: number[] = [];
  const again: number[] = [];
  const direct: number[] = [];
  for (let sample = 0; sample < TTFT_SAMPLES; sample++) {
    fresh.push((await chatToFirstDelta(socket)).ms);
    direct.push(await providerFirstByte(provider.baseUrl, body));
    again.push((await chatToFirstDelta(socket, continued)).ms);
  }
  socket.close();
  await server.stop();
  await provider.close();
  const ttfb = median(direct);
  for (const [label, samples] of [
    ["a new session", fresh],
    ["a continued session", again],
  ] as const) {
    const ttft = median(samples);
    report({
      package: "dispatcher",
      metric: `time to first token, ${label}: chat frame -> first delta frame (provider waits ${PROVIDER_DELAY_MS} ms)`,
      unit: "ms",
      median: ttft,
      baseline: ttfb,
      baselineLabel: "the provider server's time to first byte, raw HTTP client",
      target: "<= 1.2x baseline + 5 ms",
      met: ttft <= 1.2 * ttfb + 5,
      samples: samples.length,
    });
  }
}

/** One client's chat: its delta texts in order. */
function receiveReply(socket: WebSocket): Promise<{ text: string; frames: string[] }> {
  return new Promise((resolve) => {
    let text = "";
    const frames: string[] = [];
    socket.on("message", (data: Buffer) => {
      const raw = data.toString("utf8");
      const frame = JSON.parse(raw) as { type: string; text?: string };
      if (frame.type === "delta") {
        text += frame.text ?? "";
        frames.push(raw);
      }
      if (frame.type === "turn_done" || frame.type === "turn_failed") resolve({ text, frames });
    });
    socket.send(JSON.stringify({ type: "chat", text: "Stream me a long reply." }));
  });
}

async function fiftyClients(): Promise<void> {
  const expected = scriptedReply(TOKENS).join("");
  const server = await startChild(["scripted", String(CLIENTS), String(TOKENS)]);
  const url = `ws://127.0.0.1:${server.port}/ws`;
  const sockets = await Promise.all(Array.from({ length: CLIENTS }, () => openSocket(url)));
  const before = await server.ask<Usage>({ cmd: "usage" });
  const replies = await Promise.all(sockets.map(receiveReply));
  const after = await server.ask<Usage>({ cmd: "usage" });
  for (const socket of sockets) socket.close();
  await server.stop();
  const intact = replies.filter((reply) => reply.text === expected).length;
  const deltas = replies.reduce((sum, reply) => sum + reply.frames.length, 0);
  const perDelta = (after.cpuMicros - before.cpuMicros) / deltas;

  // The floor: a bare ws server sending the same frames (the first client's, to every client).
  const bare = await startChild(["bare"]);
  const bareSockets = await Promise.all(
    Array.from({ length: CLIENTS }, () => openSocket(`ws://127.0.0.1:${bare.port}`)),
  );
  const frames = replies[0]?.frames ?? [];
  const received = Promise.all(
    bareSockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          let count = 0;
          socket.on("message", () => {
            if (++count === frames.length) resolve();
          });
        }),
    ),
  );
  const bareBefore = await bare.ask<Usage>({ cmd: "usage" });
  await bare.ask<Usage>({ cmd: "broadcast", frames });
  await received;
  const bareAfter = await bare.ask<Usage>({ cmd: "usage" });
  for (const socket of bareSockets) socket.close();
  await bare.stop();
  const barePerFrame = (bareAfter.cpuMicros - bareBefore.cpuMicros) / (frames.length * CLIENTS);

  process.stdout.write(
    `${CLIENTS} clients x ${TOKENS} tokens: ${deltas} delta frames (${(deltas / CLIENTS).toFixed(0)} per client), ` +
      `${intact}/${CLIENTS} clients got every token in order\n`,
  );
  const base = { package: "dispatcher", samples: deltas } as const;
  report({
    ...base,
    metric: `server CPU per delta frame delivered (${CLIENTS} clients x ${TOKENS}-token replies, ${intact}/${CLIENTS} intact)`,
    unit: "µs",
    median: perDelta,
    baseline: barePerFrame,
    baselineLabel: "bare ws server sending the same frames",
    met: intact === CLIENTS,
    target: "every client gets every token in order",
  });
  report({
    ...base,
    metric: `server RSS after ${CLIENTS} concurrent ${TOKENS}-token streamed replies`,
    unit: "MiB",
    median: after.rss / MiB,
    baseline: before.rss / MiB,
    baselineLabel: "RSS before the replies",
  });
}

process.stdout.write("dispatcher streaming bench\n");
await timeToFirstToken();
await fiftyClients();
