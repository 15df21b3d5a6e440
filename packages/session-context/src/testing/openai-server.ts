import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A request the fake server received, with the body exactly as sent. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  /** The raw body text (hash it to compare with an llm node's prompt_sha256). */
  body: string;
  /** The parsed body. */
  json: { model?: string; messages?: Array<{ role: string; content: string }>; [key: string]: unknown };
}

/** What the handler answers: a reply text, or an HTTP error. */
export type FakeReply =
  | string
  | { status: number; message: string; type?: string }
  | { delayMs: number; reply: string };

/** Decides the reply to each chat-completions request. */
export type FakeReplyHandler = (request: ReceivedRequest, index: number) => FakeReply | Promise<FakeReply>;

/** A running fake OpenAI-compatible server on loopback. */
export interface FakeOpenAIServer {
  /** Base URL to put in OPENAI_BASE_URL (ends in /v1). */
  readonly baseUrl: string;
  readonly port: number;
  /** Every chat-completions request, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Replace how replies are chosen. */
  setHandler(handler: FakeReplyHandler): void;
  close(): Promise<void>;
}

/**
 * Starts an HTTP server on 127.0.0.1 (ephemeral port) that speaks the OpenAI
 * chat-completions protocol: `POST /v1/chat/completions` answers with a
 * `chat.completion` object, errors with the OpenAI error envelope. By default
 * it replies `reply #<n> to <first 40 chars of the last user message>`.
 */
export async function startFakeOpenAIServer(handler?: FakeReplyHandler): Promise<FakeOpenAIServer> {
  const requests: ReceivedRequest[] = [];
  let current: FakeReplyHandler = handler ?? defaultHandler;
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "server_error" } });
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const path = (req.url ?? "/").split("?")[0] as string;
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      sendJson(res, 404, { error: { message: `No route ${req.method} ${path}`, type: "invalid_request_error" } });
      return;
    }
    let json: ReceivedRequest["json"];
    try {
      json = JSON.parse(body) as ReceivedRequest["json"];
    } catch {
      sendJson(res, 400, { error: { message: "Request body is not JSON", type: "invalid_request_error" } });
      return;
    }
    const received: ReceivedRequest = { method: req.method, path, headers: req.headers, body, json };
    requests.push(received);
    const reply = await current(received, requests.length - 1);
    if (typeof reply === "object" && "status" in reply) {
      sendJson(res, reply.status, {
        error: { message: reply.message, type: reply.type ?? "server_error", code: null },
      });
      return;
    }
    let text: string;
    if (typeof reply === "object") {
      await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      text = reply.reply;
    } else {
      text = reply;
    }
    sendJson(res, 200, {
      id: `chatcmpl-${requests.length}`,
      object: "chat.completion",
      created: 1_800_000_000,
      model: json.model ?? "fake-model",
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
      usage: { prompt_tokens: body.length, completion_tokens: text.length, total_tokens: body.length + text.length },
    });
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    setHandler(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function defaultHandler(request: ReceivedRequest, index: number): FakeReply {
  const messages = request.json.messages ?? [];
  const lastUser = [...messages].reverse().find((message) => message.role === "user")?.content ?? "";
  return `reply #${index + 1} to ${lastUser.slice(0, 40)}`;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
