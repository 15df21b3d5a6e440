import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { EventLogger } from "./logging.js";
import type { ServerLimits } from "./limits.js";

/** What the gate knows: open connections, and which sockets it refused. */
export interface ConnectionGate {
  readonly total: number;
  readonly byAddress: ReadonlyMap<string, number>;
  /** True for a socket answered with 503: requests or upgrades that still arrive on it are ignored. */
  isRefused(socket: Socket): boolean;
}

/**
 * Caps open TCP connections (HTTP and WebSocket alike: an upgraded socket
 * stays the same connection), in total and per remote address. A connection
 * over a cap is answered at once with HTTP 503 `too_many_connections` and
 * closed; a request or upgrade that still arrives on it is ignored (see
 * `isRefused`), so it never reaches the page, the probes or the WebSocket.
 */
export function gateConnections(
  server: Server,
  limits: Pick<ServerLimits, "maxConnections" | "maxConnectionsPerAddress">,
  log: EventLogger,
): ConnectionGate {
  const byAddress = new Map<string, number>();
  const refused = new WeakSet<Socket>();
  const counts = { total: 0 };
  // Prepended: it runs before Node's own HTTP connection handling.
  server.prependListener("connection", (socket: Socket) => {
    const address = normalizeAddress(socket.remoteAddress);
    const fromAddress = byAddress.get(address) ?? 0;
    const overTotal = counts.total >= limits.maxConnections;
    if (overTotal || fromAddress >= limits.maxConnectionsPerAddress) {
      const reason = overTotal
        ? `The dispatcher has ${limits.maxConnections} connections open, its limit (--max-connections); try again later.`
        : `${address} has ${limits.maxConnectionsPerAddress} connections open, the most one address may (--max-connections-per-address); close some first.`;
      log.warn("connection_refused", { remote: address, reason: overTotal ? "total" : "per_address" });
      refused.add(socket);
      refuse(socket, reason);
      return;
    }
    counts.total++;
    byAddress.set(address, fromAddress + 1);
    socket.once("close", () => {
      counts.total--;
      const left = (byAddress.get(address) ?? 1) - 1;
      if (left <= 0) byAddress.delete(address);
      else byAddress.set(address, left);
    });
  });
  return {
    get total() {
      return counts.total;
    },
    byAddress,
    isRefused: (socket) => refused.has(socket),
  };
}

function refuse(socket: Socket, reason: string): void {
  const body = JSON.stringify({ error: { code: "too_many_connections", message: reason } });
  socket.on("error", () => socket.destroy());
  socket.end(
    [
      "HTTP/1.1 503 Service Unavailable",
      "Connection: close",
      "Content-Type: application/json",
      "Retry-After: 1",
      `Content-Length: ${Buffer.byteLength(body)}`,
      "",
      body,
    ].join("\r\n"),
  );
  // Whatever the client sends meanwhile is not read; the socket goes once the answer is out.
  socket.once("finish", () => socket.destroy());
}

/** IPv4 peers of a dual-stack server appear as `::ffff:a.b.c.d`; count them under the IPv4 address. */
function normalizeAddress(address: string | undefined): string {
  if (!address) return "unknown";
  return address.startsWith("::ffff:") ? address.slice("::ffff:".length) : address;
}
