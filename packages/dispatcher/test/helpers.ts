import { request as httpRequest } from "node:http";
import type { Runtime } from "@openprogram/session-context";
import { createTempStore, type TempStore } from "@openprogram/session-context/testing";
import { WebSocket, type ClientOptions } from "ws";
import { expect } from "vitest";
import {
  createDispatcher,
  type Dispatcher,
  type DispatcherOptions,
  type ErrorFrame,
  type LogEntry,
  type ServerFrame,
} from "../src/index.js";

/** A frame the server sent. */
export type Frame = ServerFrame;
/** The server frame of one type. */
export type FrameOf<T extends Frame["type"]> = Extract<Frame, { type: T }>;

const WAIT_MS = 30_000;

/** A real `ws` client that records every frame it receives. */
export class TestClient {
  readonly frames: Frame[] = [];
  private readonly consumed = new Set<number>();
  private readonly waiters = new Set<() => void>();
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      this.frames.push(JSON.parse((data as Buffer).toString("utf8")) as Frame);
      for (const wake of this.waiters) wake();
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const wake of this.waiters) wake();
    });
  }

  /** Connects and waits for the `hello` frame. */
  static async connect(url: string, options: ClientOptions = {}): Promise<TestClient> {
    const socket = new WebSocket(url, options);
    const client = new TestClient(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    await client.next("hello");
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The first frame of one of `types` not returned before (and matching `match`); waits for it with a generous timeout. */
  async next<T extends Frame["type"]>(
    types: T | T[],
    match: (frame: FrameOf<T>) => boolean = () => true,
  ): Promise<FrameOf<T>> {
    const wanted: Frame["type"][] = Array.isArray(types) ? types : [types];
    const what = wanted.join(" or ");
    for (;;) {
      const index = this.frames.findIndex(
        (frame, position) => !this.consumed.has(position) && wanted.includes(frame.type) && match(frame as FrameOf<T>),
      );
      if (index !== -1) {
        this.consumed.add(index);
        return this.frames[index] as FrameOf<T>;
      }
      if (this.closed)
        throw new Error(
          `Socket closed (${this.closed.code} ${this.closed.reason}) while waiting for ${what}; got ${this.describe()}`,
        );
      await this.wake(what);
    }
  }

  /** Sends a frame and returns the next frame of `type`, or the next error frame. */
  async request<T extends Frame["type"]>(frame: Record<string, unknown>, type: T): Promise<FrameOf<T> | ErrorFrame> {
    this.send(frame);
    return (await this.next<T | "error">([type, "error"])) as FrameOf<T> | ErrorFrame;
  }

  /** Sends a frame that must be refused; returns the error frame. */
  async refused(frame: Record<string, unknown> | string): Promise<ErrorFrame> {
    this.send(frame);
    return this.next("error");
  }

  /** Resolves when the socket has closed. */
  async waitClosed(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await this.wake("close");
    return this.closed;
  }

  close(): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING)
      this.socket.terminate();
  }

  private wake(what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(done);
        reject(new Error(`Timed out waiting for ${what}; got ${this.describe()}`));
      }, WAIT_MS);
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      this.waiters.add(done);
    });
  }

  private describe(): string {
    return (
      this.frames.map((frame) => frame.type + (frame.type === "error" ? `:${frame.code}` : "")).join(", ") ||
      "no frames"
    );
  }
}

/** A dispatcher on an ephemeral loopback port over a temp store, with its log entries. */
export interface TestDispatcher {
  dispatcher: Dispatcher;
  store: TempStore;
  logs: LogEntry[];
  connect(options?: ClientOptions, query?: string): Promise<TestClient>;
}

/** Everything a test opened, closed in afterEach by `closeAll`. */
const opened: Array<() => Promise<void> | void> = [];

/** Starts a dispatcher for a test (closed by closeAll). */
export async function startDispatcher(
  options: Omit<DispatcherOptions, "port" | "db"> & { runtime?: Runtime | null; store?: TempStore } = {},
): Promise<TestDispatcher> {
  const store = options.store ?? createTempStore("openprogram-dispatcher-test-");
  const logs: LogEntry[] = [];
  const { store: _ignored, ...rest } = options;
  const dispatcher = await createDispatcher({ ...rest, port: 0, db: store.db, log: (entry) => logs.push(entry) });
  opened.push(async () => {
    await dispatcher.close();
    store.cleanup();
  });
  return {
    dispatcher,
    store,
    logs,
    connect: async (clientOptions = {}, query = "") => {
      const client = await TestClient.connect(`${dispatcher.wsUrl}${query}`, clientOptions);
      opened.push(() => client.close());
      return client;
    },
  };
}

/** Registers something for closeAll. */
export function onCleanup(close: () => Promise<void> | void): void {
  opened.push(close);
}

/** Closes clients, dispatchers and stores a test opened, newest first. */
export async function closeAll(): Promise<void> {
  while (opened.length > 0) await (opened.pop() as () => Promise<void> | void)();
}

/** An HTTP response of the dispatcher. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A plain HTTP request (also for upgrade attempts, which must be answered without a socket). */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on("upgrade", (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 101, headers: response.headers, body: "" });
    });
    request.on("error", reject);
    request.end();
  });
}

/** Upgrade headers of a WebSocket handshake, for raw attempts. */
export function upgradeHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    Connection: "Upgrade",
    Upgrade: "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
    ...extra,
  };
}

/** Asserts that a frame is an error frame and returns it narrowed. */
export function asError(frame: Frame): ErrorFrame {
  expect(frame.type).toBe("error");
  return frame as ErrorFrame;
}

/** Asserts that a frame is of `type` (not an error) and returns it narrowed. */
export function asFrame<T extends Frame["type"]>(frame: Frame, type: T): FrameOf<T> {
  expect(frame.type === "error" ? `error ${frame.code}: ${frame.message}` : frame.type).toBe(type);
  return frame as FrameOf<T>;
}
