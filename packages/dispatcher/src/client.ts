import { WebSocket } from "ws";
import { encodeFrame, type ServerFrame } from "./protocol.js";

/** The connection under a client's WebSocket (the net.Socket of its upgrade), whose writes can be held and merged. */
export interface CorkableStream {
  cork(): void;
  uncork(): void;
}

/**
 * Frames a client has not read yet, beyond which it is cut off by default
 * (`limits.maxUnsentBytes`): a client that stops reading must not make the
 * server buffer without bound.
 */
export const MAX_UNSENT_BYTES = 8 * 1024 * 1024;

/** The close code of a client cut off for not reading (4000-4999: the application's own). */
export const CLOSE_TOO_SLOW = 4008;

/** How long a cut-off client has to read what was already queued and the close frame before the socket is dropped. */
const CUT_OFF_GRACE_MS = 10_000;

/** Turns one connection may run at once (each may create a session). */
export const MAX_TURNS_PER_CONNECTION = 16;

/** One connected WebSocket client. */
export class Client {
  /** Answered the last heartbeat ping. */
  alive = true;
  /** Turns this connection started that are still running. */
  runningTurns = 0;
  /** When a frame last went either way (ms, `performance.now()`); pings do not count. */
  lastActivity = performance.now();
  /** The W3C `traceparent` header of the upgrade request: the turns this connection starts join that trace. */
  traceparent: string | undefined;

  constructor(
    /** Short id for logs ("c1", "c2", ...); never sent to other clients. */
    readonly id: string,
    readonly socket: WebSocket,
    /** Called once when the client is cut off for not reading. */
    private readonly onTooSlow: (client: Client) => void = () => undefined,
    private readonly maxUnsentBytes = MAX_UNSENT_BYTES,
    /**
     * The connection under `socket`. The frames a client is sent in one turn of the event loop (a status and the
     * turn_done after it; a node and its delta) then go out in one write: each write to a socket is a system call
     * and, over loopback, the receiver's work too, and it was the dispatcher's largest own cost per turn.
     */
    private readonly connection: CorkableStream | null = null,
  ) {}

  /** True while this turn of the event loop's frames are held, to be written together (see `connection`). */
  private corked = false;

  /** True when no frame went either way for `idleMs` and no turn of this connection runs. */
  isIdle(idleMs: number, now = performance.now()): boolean {
    return this.runningTurns === 0 && now - this.lastActivity >= idleMs;
  }

  /** Sends a frame if the socket is still open; a closing socket drops it. */
  send(frame: ServerFrame): void {
    this.sendEncoded(encodeFrame(frame));
  }

  /** Sends an already-encoded frame (one encoding shared by every subscriber). */
  sendEncoded(text: string): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    if (this.socket.bufferedAmount > this.maxUnsentBytes) {
      this.cutOff();
      return;
    }
    this.lastActivity = performance.now();
    if (this.connection !== null && !this.corked) {
      this.corked = true;
      this.connection.cork();
      setImmediate(this.uncork);
    }
    this.socket.send(text, () => {
      // A send that fails means the socket is closing; its close handler cleans up.
    });
  }

  /** Writes the frames held since the first of this turn of the event loop, in order, in one write. */
  private readonly uncork = (): void => {
    this.corked = false;
    this.connection?.uncork();
  };

  /**
   * Cuts off a client that stopped reading: nothing more is queued for it (so
   * its memory stays under the limit), a close frame saying why goes after
   * what is queued, and the socket is dropped if it still has not read it all
   * after a grace period. Its turns go on.
   */
  private cutOff(): void {
    this.socket.close(CLOSE_TOO_SLOW, `too slow: more than ${this.maxUnsentBytes} bytes of frames unread`);
    setTimeout(() => this.socket.terminate(), CUT_OFF_GRACE_MS).unref();
    this.onTooSlow(this);
  }
}
