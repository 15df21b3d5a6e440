// The frames a client is sent in one turn of the event loop leave in one write to its socket, in order; frames of
// later turns are not held back. A real ws server on loopback; a wrapper counts the writes its socket makes (each
// one a system call). A client without its connection (as before) makes one write per frame: the control.
import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { Client } from "../src/client.js";
import type { ServerFrame } from "../src/index.js";

interface Served {
  server: Client;
  /** Writes the server side's socket has made so far. */
  writes(): number;
  received: string[];
  close(): Promise<void>;
}

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** One connection: the server side wrapped in a Client (corking its connection or not), the far side collecting frames. */
async function connect(cork: boolean): Promise<Served> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  let writes = 0;
  const accepted = new Promise<Client>((resolve) => {
    http.on("upgrade", (request, socket: Socket, head) => {
      // Every write the socket makes to the kernel goes through _write or _writev: count them.
      const counted = socket as unknown as Record<"_write" | "_writev", ((...args: unknown[]) => unknown) | undefined>;
      for (const method of ["_write", "_writev"] as const) {
        const original = counted[method];
        if (typeof original !== "function") continue;
        counted[method] = (...args: unknown[]) => {
          writes++;
          return original.apply(socket, args);
        };
      }
      wss.handleUpgrade(request, socket, head, (ws) =>
        resolve(new Client("c1", ws, () => undefined, undefined, cork ? socket : null)),
      );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as { port: number };
  const far = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  const received: string[] = [];
  far.on("message", (data) => received.push((data as Buffer).toString("utf8")));
  await new Promise((resolve, reject) => far.once("open", resolve).once("error", reject));
  const server = await accepted;
  const close = async (): Promise<void> => {
    far.close();
    wss.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  };
  closing.push(close);
  return { server, writes: () => writes, received, close };
}

function status(index: number): ServerFrame {
  return { type: "status", session_id: `session_${index}`, status: "running" };
}

async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; !check(); waited += 5) {
    if (waited > 10_000) throw new Error("the frames did not arrive");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("a client's writes", () => {
  it("sends the frames of one turn of the event loop in one write, in order", async () => {
    const served = await connect(true);
    const before = served.writes();
    for (let index = 0; index < 5; index++) served.server.send(status(index));
    await until(() => served.received.length === 5);
    expect(served.received.map((text) => (JSON.parse(text) as { session_id: string }).session_id)).toEqual(
      Array.from({ length: 5 }, (_, index) => `session_${index}`),
    );
    expect(served.writes() - before, "five frames, one write").toBe(1);
  });

  it("holds no frame past its turn of the event loop", async () => {
    const served = await connect(true);
    const before = served.writes();
    served.server.send(status(0));
    await tick();
    await tick();
    served.server.send(status(1));
    await until(() => served.received.length === 2);
    expect(served.writes() - before, "a write for each turn of the event loop").toBe(2);
  });

  it("without its connection, writes each frame on its own (the control)", async () => {
    const served = await connect(false);
    const before = served.writes();
    for (let index = 0; index < 5; index++) served.server.send(status(index));
    await until(() => served.received.length === 5);
    expect(served.writes() - before).toBe(5);
  });
});
