import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WebSocket } from "ws";
import { ListenError } from "./errors.js";
import type { NormalizedOptions } from "./options.js";

/** Sockets that do not finish the close handshake in time are cut. */
const CLOSE_HANDSHAKE_MS = 3_000;

/** Listens on the configured address; a failure is a ListenError that says what to do. */
export function listen(server: Server, settings: NormalizedOptions): Promise<AddressInfo> {
  return new Promise((resolvePromise, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      const where = `${settings.host}:${settings.port}`;
      const hint =
        error.code === "EADDRINUSE"
          ? `${where} is already in use; stop the other process or pick another --port (0 picks a free one).`
          : error.code === "EACCES"
            ? `no permission to listen on ${where}; ports below 1024 need privileges, use a higher --port.`
            : error.code === "EADDRNOTAVAIL" || error.code === "ENOTFOUND"
              ? `${settings.host} is not an address of this machine; check --host.`
              : `listening on ${where} failed: ${error.message}`;
      reject(new ListenError(`The dispatcher cannot start: ${hint}`, { cause: error }));
    };
    server.once("error", onError);
    server.listen(settings.port, settings.host, () => {
      server.off("error", onError);
      resolvePromise(server.address() as AddressInfo);
    });
  });
}

/** Closes every socket with 1001 and the reason; sockets that do not finish the handshake in time are cut. */
export async function closeSockets(sockets: WebSocket[], reason: string): Promise<void> {
  const closeReason = Buffer.from(reason)
    .subarray(0, 123)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolvePromise) => {
          if (socket.readyState === socket.CLOSED) {
            resolvePromise();
            return;
          }
          const timer = setTimeout(() => {
            socket.terminate();
            resolvePromise();
          }, CLOSE_HANDSHAKE_MS);
          socket.once("close", () => {
            clearTimeout(timer);
            resolvePromise();
          });
          socket.close(1001, closeReason);
        }),
    ),
  );
}
