// Shared by the hostile tests (issue 13): a WebSocket peer that keeps every
// frame, raw HTTP and TCP probes, and `openprogram serve` in a child process.
import { spawn, type ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { fileURLToPath } from "node:url";
import { findFreePort } from "@openprogram/session-context/testing";
import WebSocket from "ws";

/** The built `openprogram` binary. */
export const CLI_BIN = fileURLToPath(new URL("../../../../packages/cli/dist/bin.js", import.meta.url));
/** The programs of the hostile tests. */
export const PROGRAMS = fileURLToPath(new URL("../../programs/hostile.mjs", import.meta.url));

/** Any frame, read field by field. */
export type Frame = Record<string, unknown> & { type: string };

const WAIT_MS = 30_000;

/** Polls `check` until it holds; a generous deadline, never a timing assertion. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A WebSocket client that keeps every frame it receives. */
export class Peer {
  readonly frames: Frame[] = [];
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data: Buffer) => this.frames.push(JSON.parse(data.toString("utf8")) as Frame));
    socket.on("close", (code, reason) => (this.closed = { code, reason: reason.toString() }));
  }

  /** Connects (waiting for `hello`); rejects with the HTTP status when the upgrade is refused. */
  static async open(url: string, options: WebSocket.ClientOptions = {}): Promise<Peer> {
    const socket = new WebSocket(url, options);
    const peer = new Peer(socket);
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    await peer.waitFor((frame) => frame.type === "hello", "hello");
    return peer;
  }

  send(frame: unknown): void {
    this.socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
  }

  /** The first frame (received so far or later) matching `match`. */
  async waitFor(match: (frame: Frame) => boolean, what: string): Promise<Frame> {
    let found: Frame | undefined;
    await eventually(() => {
      found = this.frames.find(match);
      if (!found && this.closed) throw new Error(`Closed (${this.closed.code}) while waiting for ${what}`);
      return found !== undefined;
    }, what);
    return found as Frame;
  }

  /** Resolves once the server closed the socket. */
  async waitClosed(): Promise<{ code: number; reason: string }> {
    await eventually(() => this.closed !== null, "the socket to close");
    return this.closed as { code: number; reason: string };
  }

  close(): void {
    this.socket.terminate();
  }
}

/** An HTTP answer, also to an upgrade attempt (101 when the upgrade was accepted). */
export interface RawAnswer {
  status: number;
  body: string;
}

/** A GET (with upgrade headers when `upgrade`), from `localAddress` if given. */
export function get(
  url: string,
  options: { headers?: Record<string, string>; upgrade?: boolean; localAddress?: string } = {},
): Promise<RawAnswer> {
  const headers = {
    ...(options.upgrade
      ? {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        }
      : {}),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      headers,
      agent: false,
      ...(options.localAddress ? { localAddress: options.localAddress } : {}),
    });
    request.on("response", (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("upgrade", (response, socket) => {
      socket.destroy();
      resolve({ status: response.statusCode ?? 101, body: "" });
    });
    request.on("error", reject);
    request.end();
  });
}

/** Sends `bytes` over a raw TCP connection and resolves with everything received once the server closes it. */
export function rawExchange(port: number, bytes: string | null): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = "";
    const socket = connect(port, "127.0.0.1", () => {
      if (bytes !== null) socket.write(bytes);
    });
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    socket.on("error", reject);
    socket.on("close", () => resolve(received));
  });
}

/** `openprogram serve` in a child process, with its JSON log lines. */
export interface ServedChild {
  child: ChildProcess;
  port: number;
  url: string;
  /** The log lines so far. */
  lines(): Frame[];
  /** Resolves with the first log line of this event. */
  event(name: string): Promise<Frame>;
  stop(): Promise<void>;
}

/** Starts `openprogram serve --port <free> ...args` and waits for its start line. */
export async function startServe(args: string[], env: Record<string, string>): Promise<ServedChild> {
  const port = await findFreePort();
  const child = spawn(process.execPath, [CLI_BIN, "serve", "--port", String(port), "--log-format", "json", ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const lines = (): Frame[] =>
    stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Frame);
  const event = async (name: string): Promise<Frame> => {
    await eventually(() => {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}:\n${stdout}\n${stderr}`);
      return lines().some((line) => line.event === name);
    }, `the ${name} log line`);
    return lines().find((line) => line.event === name) as Frame;
  };
  await event("start");
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    lines,
    event,
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
