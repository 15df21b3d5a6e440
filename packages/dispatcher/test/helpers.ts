import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Runtime } from "@openprogram/session-context";
import { createTempStore, removeTree, type TempStore } from "@openprogram/session-context/testing";
import type { ClientOptions } from "ws";
import { expect } from "vitest";
import {
  createDispatcher,
  type Dispatcher,
  type DispatcherOptions,
  type ErrorFrame,
  type LogEntry,
  type ServerFrame,
} from "../src/index.js";
import { TestClient, type FrameOf } from "../src/testing/index.js";

/** A frame the server sent. */
export type Frame = ServerFrame;
export { TestClient, type FrameOf };

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

/** A dispatcher serving in a child process, with its log lines. */
export interface ServedChild {
  child: ChildProcess;
  home: string;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first log entry of this event (waits for it, 60 s unless told: a bound on a hang). */
  event(name: string, waitMs?: number): Promise<Record<string, unknown>>;
}

/**
 * Starts a script that calls `serve()` (from dist/) in a real child process
 * configured by its environment only: a temp OPENPROGRAM_HOME (or `home`,
 * which the caller removes: a restart on the same store), port 0, and `env`.
 * Resolves once it logged `start`; killed and cleaned up by closeAll.
 */
export async function serveInChild(
  script: string,
  env: Record<string, string>,
  sharedHome?: string,
): Promise<ServedChild & { wsUrl: string }> {
  const home = sharedHome ?? mkdtempSync(join(tmpdir(), "openprogram-serve-"));
  const child = spawn(process.execPath, [script], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      OPENPROGRAM_HOME: home,
      OPENPROGRAM_PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let stderr = "";
  let buffered = "";
  const waiting = new Set<() => void>();
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    lines.push(...parts);
    for (const wake of waiting) wake();
  });
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  onCleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    if (sharedHome === undefined) removeTree(home);
  });
  const event = async (name: string, waitMs = 60_000): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const found = lines
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .find((entry) => entry.event === name);
      if (found) return found;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`No ${name} log line; stdout:\n${lines.join("\n")}\nstderr:\n${stderr}`);
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          waiting.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 200);
        waiting.add(wake);
      });
    }
  };
  const start = await event("start");
  return { child, home, lines, exited, event, wsUrl: String(start.ws_url) };
}
