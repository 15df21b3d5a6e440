// A real `ws` client for tests of the dispatcher's WebSocket protocol, from any
// package: it records every frame and waits for the ones a test asks for. Every
// frame is checked against its schema (server-frames.ts) as it arrives, so any
// test that talks to the server also proves the schemas describe what it sends.
import { WebSocket, type ClientOptions } from "ws";
import type { ErrorFrame, ServerFrame } from "../protocol.js";
import { checkServerFrame } from "../server-frames.js";

/** The server frame of one type. */
export type FrameOf<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;

/** How long `next` waits for a frame: a bound on a hang on a loaded machine, not a speed assertion. */
const WAIT_MS = 30_000;

/** A real `ws` client that records every frame it receives. */
export class TestClient {
  /** Every frame received, in order. */
  readonly frames: ServerFrame[] = [];
  /** How the socket closed, once it has. */
  closed: { code: number; reason: string } | null = null;
  /** The socket's error, if it had one (a server killed under it); `close` follows. */
  error: Error | null = null;
  /** Frames received that their schema refuses, each in a sentence; `next` throws while there is one. */
  readonly problems: string[] = [];
  private readonly consumed = new Set<number>();
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const frame: unknown = JSON.parse((data as Buffer).toString("utf8"));
      const checked = checkServerFrame(frame);
      if (!checked.ok) this.problems.push(checked.problem);
      this.frames.push(frame as ServerFrame);
      for (const wake of this.waiters) wake();
    });
    // Without a listener an error (ECONNRESET from a killed server) would be thrown out of the test.
    socket.on("error", (error) => {
      this.error = error;
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const wake of this.waiters) wake();
    });
  }

  /**
   * Connects to a `ws://.../ws` URL and waits for the `hello` frame. Pass
   * `{ headers: { origin } }` when the server checks the Origin.
   */
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

  /** Sends a frame (an object is JSON-encoded; a string goes as it is). */
  send(frame: unknown): void {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The first frame of one of `types` not returned before (and matching `match`); waits for it with a generous timeout. */
  async next<T extends ServerFrame["type"]>(
    types: T | T[],
    match: (frame: FrameOf<T>) => boolean = () => true,
  ): Promise<FrameOf<T>> {
    const wanted: ServerFrame["type"][] = Array.isArray(types) ? types : [types];
    const what = wanted.join(" or ");
    for (;;) {
      if (this.problems.length > 0)
        throw new Error(`The server sent a frame its schema refuses (server-frames.ts): ${this.problems.join("; ")}`);
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
  async request<T extends ServerFrame["type"]>(
    frame: Record<string, unknown>,
    type: T,
  ): Promise<FrameOf<T> | ErrorFrame> {
    this.send(frame);
    return (await this.next<T | "error">([type, "error"])) as FrameOf<T> | ErrorFrame;
  }

  /** Sends a frame that must be refused; returns the error frame. */
  async refused(frame: Record<string, unknown> | string): Promise<ErrorFrame> {
    this.send(frame);
    return this.next("error");
  }

  /** The text of an llm node's `delta` frames received so far, joined in order. */
  deltaText(nodeId: string): string {
    return this.frames.map((frame) => (frame.type === "delta" && frame.node_id === nodeId ? frame.text : "")).join("");
  }

  /** Resolves when the socket has closed. */
  async waitClosed(): Promise<{ code: number; reason: string }> {
    while (!this.closed) await this.wake("close");
    return this.closed;
  }

  /** Drops the connection at once. */
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
