import type { ChildProcess } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { McpRequestError, McpServerCrashedError, McpServerStartError, McpTimeoutError } from "./errors.js";
import { DEFAULT_START_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, type CheckedServer } from "./server-config.js";
import { StderrTail } from "./stderr-tail.js";
import { version } from "./version.js";

const REQUEST_TIMEOUT: number = ErrorCode.RequestTimeout;
const CONNECTION_CLOSED: number = ErrorCode.ConnectionClosed;

/** The JSON-RPC code of an McpError (the SDK's timeouts and closed connections are McpErrors). */
function mcpCode(error: unknown): number | null {
  return error instanceof McpError ? error.code : null;
}

/** Options of one request to a server. */
export interface RequestOptions {
  signal?: AbortSignal;
}

/**
 * One connected MCP server: the SDK's client over its transport, with every
 * failure turned into an error naming the server (and, for a child process,
 * the tail of its stderr). A child never keeps this process alive by itself:
 * only a request waiting for it does.
 */
export class ServerConnection {
  readonly client: Client;
  readonly stderr = new StderrTail();
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private child: ChildProcess | null = null;
  /** The child's 'close' came (exited, pipes shut): nothing more will. */
  private childClosed = false;
  private closedBy: "us" | "server" | null = null;

  private constructor(
    readonly server: CheckedServer,
    private readonly transport: Transport,
    private readonly onGone: () => void,
  ) {
    this.client = new Client({ name: "openprogram", version }, { capabilities: {} });
  }

  /** Starts the server (or opens its endpoint) and completes the MCP handshake, or throws McpServerStartError. */
  static async open(server: CheckedServer, onGone: () => void): Promise<ServerConnection> {
    const transport =
      server.kind === "stdio"
        ? new StdioClientTransport({ ...server.config, stderr: "pipe" })
        : new StreamableHTTPClientTransport(new URL(server.config.url), {
            requestInit: { headers: server.config.headers ?? {} },
          });
    const connection = new ServerConnection(server, transport, onGone);
    if (transport instanceof StdioClientTransport) {
      connection.stderr.attach(transport.stderr as never);
      // The child is needed from its spawn on: one that dies during the handshake is gone from the transport by then.
      const start = transport.start.bind(transport);
      transport.start = async () => {
        await start();
        connection.watchChild();
      };
    }
    await connection.connect();
    return connection;
  }

  get name(): string {
    return this.server.name;
  }

  /** The child's pid (stdio), for shutting it down at exit. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  private async connect(): Promise<void> {
    const timeout = this.server.config.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
    this.client.onclose = () => {
      if (this.closedBy === null) this.closedBy = "server";
      this.onGone();
    };
    try {
      await this.client.connect(this.transport, { timeout });
    } catch (error) {
      await this.settleChild();
      await this.close();
      const timedOut = mcpCode(error) === REQUEST_TIMEOUT;
      const why = timedOut
        ? `it did not complete the MCP handshake within ${timeout} ms (startTimeoutMs)`
        : this.exit
          ? `it exited (${this.describeExit()}) before completing the MCP handshake`
          : describeStartError(error);
      throw new McpServerStartError(
        this.name,
        this.stderr.text(),
        `The MCP server "${this.name}" (${this.describeTarget()}, from ${this.server.file}) could not be started: ${why}.${this.server.kind === "stdio" ? this.stderr.describe() : ""}`,
        { cause: error },
      );
    }
  }

  /** Runs one request, mapping a closed connection, a timeout or an unreachable endpoint to our errors. */
  async request<T>(
    what: string,
    run: (options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
    options: RequestOptions = {},
  ): Promise<T> {
    const timeout = this.server.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // The SDK never removes the abort listener it adds: a signal of our own per request keeps the turn's
    // signal (shared by every call of an exec) from collecting one per call.
    const outer = options.signal;
    const local = new AbortController();
    const forward = () => local.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener("abort", forward, { once: true });
    try {
      return await run({ timeout, signal: local.signal });
    } catch (error) {
      if (outer?.aborted) throw outer.reason;
      throw await this.mapped(error, what, timeout);
    } finally {
      outer?.removeEventListener("abort", forward);
    }
  }

  private async mapped(error: unknown, what: string, timeout: number): Promise<unknown> {
    if (mcpCode(error) === REQUEST_TIMEOUT) {
      const stderr = this.server.kind === "stdio" ? this.stderr.describe() : "";
      return new McpTimeoutError(
        this.name,
        timeout,
        this.stderr.text(),
        `The MCP server "${this.name}" did not answer ${what} within ${timeout} ms (timeoutMs in its mcpServers entry).${stderr}`,
      );
    }
    const closed = mcpCode(error) === CONNECTION_CLOSED;
    const unreachable = error instanceof TypeError && /fetch failed/i.test(error.message);
    if (closed || unreachable || this.closedBy === "server") {
      await this.settleChild();
      const how = this.exit
        ? `its process exited (${this.describeExit()})`
        : unreachable
          ? `its endpoint could not be reached (${describeCause(error)})`
          : "its connection closed";
      this.onGone();
      return new McpServerCrashedError(
        this.name,
        this.stderr.text(),
        `The MCP server "${this.name}" went away during ${what}: ${how}. It will be started again on the next use.${this.server.kind === "stdio" ? this.stderr.describe() : ""}`,
        { cause: error },
      );
    }
    if (error instanceof McpError)
      return new McpRequestError(
        this.name,
        error.code,
        `The MCP server "${this.name}" refused ${what}: ${error.message.replace(/^(MCP error -?\d+: )+/, "")}`,
        { cause: error },
      );
    return error;
  }

  /** Closes the connection (a child gets its stdin closed, then SIGTERM, then SIGKILL: the SDK's way). */
  async close(): Promise<void> {
    if (this.closedBy === null) this.closedBy = "us";
    const closing = this.client.close().catch(() => undefined);
    // The SDK waits for the child's 'close' with unref'd timers, and watchChild unref'd the child: a child
    // already gone never says 'close' again, and one still going must keep this process alive until it has
    // (else Node exits with 13, a top-level await unsettled, before the SDK's wait ends).
    if (this.childClosed) return;
    this.child?.ref();
    for (const stream of this.childStreams()) stream?.ref?.();
    await closing;
  }

  /** Kills the child at once (at process exit, when nothing can be awaited). */
  killNow(): void {
    try {
      this.child?.kill("SIGTERM");
    } catch {
      // Already gone.
    }
  }

  private describeTarget(): string {
    return this.server.kind === "stdio"
      ? [this.server.config.command, ...(this.server.config.args ?? [])].join(" ")
      : this.server.config.url;
  }

  private describeExit(): string {
    if (!this.exit) return "still running";
    return this.exit.signal ? `killed by ${this.exit.signal}` : `exit code ${this.exit.code}`;
  }

  /**
   * The SDK keeps its child private; we need it to see how it exited and to
   * unref it, so that a server started lazily never keeps a finished program
   * running (a request in flight still does: its timeout timer is ref'd).
   */
  watchChild(): void {
    const child = (this.transport as unknown as { _process?: ChildProcess })._process;
    if (!child) return;
    this.child = child;
    child.once("exit", (code, signal) => {
      this.exit = { code, signal };
    });
    child.once("close", () => {
      this.childClosed = true;
    });
    child.unref();
    for (const stream of this.childStreams()) stream?.unref?.();
  }

  /** The child's pipes, as handles that can be (un)ref'd. */
  private childStreams(): ({ ref?: () => void; unref?: () => void } | null)[] {
    const child = this.child;
    if (!child) return [];
    return [child.stdin, child.stdout, child.stderr] as unknown as ({ ref?: () => void; unref?: () => void } | null)[];
  }

  /** Waits (briefly) for an exiting child to be fully gone, so its exit status and last stderr are known. */
  private async settleChild(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 500);
        child.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (child && !this.exit && (child.exitCode !== null || child.signalCode !== null))
      this.exit = { code: child.exitCode, signal: child.signalCode };
    // The stderr PassThrough may still hold the last chunk.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The SDK's message, with the HTTP status an endpoint answered (a wrong token: 401). */
function describeStartError(error: unknown): string {
  const status = (error as { code?: unknown }).code;
  const http = error instanceof StreamableHTTPError && typeof status === "number" ? ` (HTTP ${status})` : "";
  return `${(error as Error).message}${http}`;
}

function describeCause(error: unknown): string {
  const cause = (error as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : (error as Error).message;
}
