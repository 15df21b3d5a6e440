// The server side of the streaming benchmark, in its own process so its CPU time and RSS are its own.
// argv: "openai" <baseUrl> (a dispatcher whose model is the OpenAI-compatible server at baseUrl),
// "scripted" <clients> <tokens> (a dispatcher whose scripted model streams `tokens` tokens to each
// of `clients` chats), or "bare" (a plain `ws` server that sends frames it is told to: the floor).
// Prints {"port"} as one JSON line, then answers IPC requests: usage, broadcast, exit.
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import { createTempStore, scriptedRuntime } from "@openprogram/session-context/testing";
import { WebSocketServer, type WebSocket } from "ws";
import { createDispatcher } from "../src/index.js";
import { scriptedReply, type StreamingChildRequest, type Usage } from "./streaming-protocol.js";

const mode = process.argv[2];
const store = createTempStore("openprogram-bench-streaming-");
const usage = (): Usage => {
  const cpu = process.cpuUsage();
  return { cpuMicros: cpu.user + cpu.system, rss: process.memoryUsage().rss };
};

async function start(): Promise<{ port: number; close: () => Promise<void>; broadcast?: (frames: string[]) => void }> {
  if (mode === "bare") {
    const wss = new WebSocketServer({ port: 0, host: "127.0.0.1", perMessageDeflate: false });
    const sockets = new Set<WebSocket>();
    wss.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => wss.once("listening", () => resolve()));
    return {
      port: (wss.address() as { port: number }).port,
      close: () => new Promise<void>((resolve) => wss.close(() => resolve())),
      // Each frame to every client, as the dispatcher's subscriptions do (one encoding, many sends).
      broadcast: (frames) => {
        for (const frame of frames) for (const socket of sockets) socket.send(frame);
      },
    };
  }
  let runtime: Runtime;
  if (mode === "openai") {
    runtime = createRuntime({
      provider: "openai",
      baseUrl: process.argv[3] ?? "",
      model: "bench",
      maxRetries: 0,
    }) as Runtime;
  } else {
    const clients = Number(process.argv[3] ?? "50");
    const chunks = scriptedReply(Number(process.argv[4] ?? "2000"));
    runtime = scriptedRuntime(Array.from({ length: clients + 10 }, () => ({ chunks, chunkDelayMs: 1 }))).runtime;
  }
  const dispatcher = await createDispatcher({ port: 0, db: store.db, runtime, log: () => undefined });
  return { port: dispatcher.port, close: () => dispatcher.close() };
}

const server = await start();
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on("message", (message: StreamingChildRequest) => {
  if (message.cmd === "usage") process.send?.(usage());
  else if (message.cmd === "broadcast") {
    server.broadcast?.(message.frames);
    process.send?.(usage());
  } else if (message.cmd === "exit") {
    void server.close().then(() => {
      store.cleanup();
      process.exit(0);
    });
  }
});
