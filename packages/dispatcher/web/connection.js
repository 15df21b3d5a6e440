// @ts-check
// The page's WebSocket to the dispatcher, kept open: a dropped connection is
// retried with capped exponential backoff and jitter, and only a refused token
// asks the user for one. Browsers hide the HTTP status of a refused upgrade
// (the socket just closes), so after a close that never opened the page asks
// `GET /ws` over plain HTTP with the same token: the dispatcher answers 401
// when the token is missing or wrong, and a server that is gone answers
// nothing (a network error), which is a disconnection, not a token problem.
// Type-checked against the protocol's types (tsconfig.web.json).

/** @typedef {import("../src/protocol.js").ServerFrame} ServerFrame */
/** @typedef {import("../src/protocol.js").ClientFrame} ClientFrame */
/** @typedef {"connecting" | "open" | "reconnecting" | "unauthorized"} ConnectionState */
/**
 * What `keepConnected` is given.
 * @typedef {object} ConnectionOptions
 * @property {string} url The dispatcher's `ws(s)://.../ws` URL.
 * @property {() => string | null} token The token to present now, if any.
 * @property {() => void} onOpen
 * @property {(frame: ServerFrame) => void} onFrame
 * @property {(kind: ConnectionState, text: string) => void} onState
 */
/**
 * The kept-open connection.
 * @typedef {object} Connection
 * @property {(frame: ClientFrame) => boolean} send Sends one frame; false when not connected.
 * @property {() => void} reconnect Connects again at once (after a new token was entered).
 */

/** First retry after this long; each failed attempt doubles it, up to the cap. */
export const RECONNECT_BASE_MS = 500;
/** The longest wait between attempts, so a restarted dispatcher is found soon. */
export const RECONNECT_CAP_MS = 8_000;
/** A close code an application may use to say "your token was refused" (4000-4999 are the application's). */
export const CLOSE_UNAUTHORIZED = 4001;

/**
 * The wait before attempt `attempt` (0-based): full backoff with ±25 % jitter, so reloaded pages spread out.
 * @param {number} attempt
 * @param {() => number} [random]
 */
export function reconnectDelay(attempt, random = Math.random) {
  const backoff = Math.min(RECONNECT_CAP_MS, RECONNECT_BASE_MS * 2 ** attempt);
  return Math.round(backoff * (0.75 + random() * 0.5));
}

/**
 * Opens and keeps open the page's socket. `onState(kind, text)` gets
 * "connecting", "open", "reconnecting" (a drop: retried by itself) and
 * "unauthorized" (the token was refused: retried once a token is entered).
 * @param {ConnectionOptions} options
 * @returns {Connection}
 */
export function keepConnected({ url, token, onOpen, onFrame, onState }) {
  /** @type {WebSocket | null} */
  let socket = null;
  let attempt = 0;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer = undefined;

  function open() {
    timer = undefined;
    const target = new URL(url);
    const presented = token();
    if (presented) target.searchParams.set("token", presented);
    onState("connecting", attempt === 0 ? "connecting…" : "disconnected, reconnecting…");
    const current = new WebSocket(target);
    socket = current;
    let opened = false;
    current.addEventListener("open", () => {
      opened = true;
      attempt = 0;
      onState("open", "connected");
      onOpen();
    });
    current.addEventListener("message", (event) => {
      /** @type {ServerFrame} */
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      onFrame(frame);
    });
    current.addEventListener("close", (event) => {
      if (socket === current) socket = null;
      if (event.code === CLOSE_UNAUTHORIZED) return refused(event.reason);
      if (opened) return retry();
      void tokenRefused(presented).then((reason) => (reason === null ? retry() : refused(reason)));
    });
  }

  function retry() {
    onState("reconnecting", "disconnected, reconnecting…");
    timer = setTimeout(open, reconnectDelay(attempt));
    attempt += 1;
  }

  /** @param {string} reason */
  function refused(reason) {
    onState("unauthorized", reason || "This dispatcher requires a token: enter it above.");
  }

  /**
   * The dispatcher's reason when it refuses this token over plain HTTP, or null (gone, or the token is fine).
   * @param {string | null} presented
   * @returns {Promise<string | null>}
   */
  async function tokenRefused(presented) {
    const probe = new URL(url);
    probe.protocol = probe.protocol === "wss:" ? "https:" : "http:";
    try {
      const response = await fetch(probe, {
        cache: "no-store",
        headers: presented ? { authorization: `Bearer ${presented}` } : {},
      });
      if (response.status !== 401) return null;
      const body = await response.json().catch(() => ({}));
      return body?.error?.message ?? "The token was refused.";
    } catch {
      return null;
    }
  }

  open();
  return {
    /** Sends one frame; false when not connected. */
    send(frame) {
      if (!socket || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(frame));
      return true;
    },
    /** Connects again at once (after a new token was entered). */
    reconnect() {
      clearTimeout(timer);
      attempt = 0;
      if (socket) socket.close();
      else open();
    },
  };
}
