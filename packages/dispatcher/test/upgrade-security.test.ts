import { InvalidInputError } from "@openprogram/session-context";
import { createTempStore } from "@openprogram/session-context/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createDispatcher } from "../src/index.js";
import { closeAll, httpGet, onCleanup, startDispatcher, TestClient, upgradeHeaders } from "./helpers.js";

afterEach(closeAll);

const TOKEN = "t0ken-for-tests-0123456789abcdef";

function errorMessage(body: string): string {
  return (JSON.parse(body) as { error: { message: string } }).error.message;
}

function wsPath(base: string): string {
  return base.replace(/^ws/, "http");
}

describe("the token on the WebSocket upgrade", () => {
  it("answers a missing or wrong token with HTTP 401 and opens no socket", async () => {
    const served = await startDispatcher({ runtime: null, token: TOKEN });
    const url = wsPath(served.dispatcher.wsUrl);
    const missing = await httpGet(url, upgradeHeaders());
    expect(missing.status).toBe(401);
    expect(missing.headers["www-authenticate"]).toContain("Bearer");
    expect(errorMessage(missing.body)).toContain("requires a token");
    const wrong = await httpGet(`${url}?token=not-it`, upgradeHeaders());
    expect(wrong.status).toBe(401);
    const wrongBearer = await httpGet(url, upgradeHeaders({ Authorization: "Bearer not-it" }));
    expect(wrongBearer.status).toBe(401);
    await expect(TestClient.connect(served.dispatcher.wsUrl)).rejects.toThrow(/401/);
    expect(served.logs.filter((entry) => entry.event === "connection_open")).toEqual([]);
    expect(served.logs.filter((entry) => entry.event === "connection_rejected").map((entry) => entry.status)).toEqual([
      401, 401, 401, 401,
    ]);
  });

  it("accepts the token in the query or as a bearer header", async () => {
    const served = await startDispatcher({ runtime: null, token: TOKEN });
    const byQuery = await served.connect({}, `?token=${TOKEN}`);
    expect(byQuery.frames[0]?.type).toBe("hello");
    const byHeader = await served.connect({ headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(byHeader.frames[0]?.type).toBe("hello");
  });

  it("requires a token to bind anything but loopback, before listening", async () => {
    const store = createTempStore();
    onCleanup(() => store.cleanup());
    await expect(createDispatcher({ host: "0.0.0.0", port: 0, db: store.db, runtime: null })).rejects.toThrow(
      InvalidInputError,
    );
    await expect(createDispatcher({ host: "0.0.0.0", port: 0, db: store.db, runtime: null })).rejects.toThrow(
      /requires a token/,
    );
    await expect(createDispatcher({ port: 0, db: store.db, runtime: null, token: "has space" })).rejects.toThrow(
      /printable ASCII/,
    );
  });
});

describe("the Origin check", () => {
  it("lets the page this dispatcher serves connect, and refuses other origins with 403 and no socket", async () => {
    const served = await startDispatcher({ runtime: null });
    const own = `http://127.0.0.1:${served.dispatcher.port}`;
    const client = await served.connect({ headers: { Origin: own } });
    expect(client.frames[0]?.type).toBe("hello");
    const url = wsPath(served.dispatcher.wsUrl);
    const foreign = await httpGet(url, upgradeHeaders({ Origin: "http://evil.example" }));
    expect(foreign.status).toBe(403);
    expect(errorMessage(foreign.body)).toContain("--allowed-origin");
    // DNS rebinding: a foreign name that resolves to 127.0.0.1 sends a matching Host, and is still refused on loopback.
    const rebound = await httpGet(
      url,
      upgradeHeaders({
        Origin: `http://evil.example:${served.dispatcher.port}`,
        Host: `evil.example:${served.dispatcher.port}`,
      }),
    );
    expect(rebound.status).toBe(403);
    const nullOrigin = await httpGet(url, upgradeHeaders({ Origin: "null" }));
    expect(nullOrigin.status).toBe(403);
  });

  it("behind a TLS reverse proxy with a token, accepts the page of the proxy's public name and scheme", async () => {
    const served = await startDispatcher({ runtime: null, token: TOKEN });
    const proxied = {
      Origin: "https://openprogram.example.com",
      Host: "openprogram.example.com",
      "X-Forwarded-Proto": "https",
    };
    const client = await served.connect({ headers: { ...proxied, Authorization: `Bearer ${TOKEN}` } });
    expect(client.frames[0]?.type).toBe("hello");
    const url = wsPath(served.dispatcher.wsUrl);
    const mismatch = await httpGet(
      url,
      upgradeHeaders({ ...proxied, Origin: "https://evil.example", Authorization: `Bearer ${TOKEN}` }),
    );
    expect(mismatch.status).toBe(403);
    // Without the proxy's word the server is plain http: an https page of the same host is another origin.
    const { "X-Forwarded-Proto": _proto, ...direct } = proxied;
    const unproxied = await httpGet(url, upgradeHeaders({ ...direct, Authorization: `Bearer ${TOKEN}` }));
    expect(unproxied.status).toBe(403);
  });

  it("compares scheme, host and port of the Origin with the page it serves", async () => {
    const served = await startDispatcher({ runtime: null });
    const url = wsPath(served.dispatcher.wsUrl);
    const port = served.dispatcher.port;
    const host = `127.0.0.1:${port}`;
    for (const origin of [
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port + 1}`,
      "http://127.0.0.1",
      `https://127.0.0.2:${port}`,
      `http://127.0.0.2:${port}`,
      `ws://127.0.0.1:${port}`,
    ]) {
      expect((await httpGet(url, upgradeHeaders({ Origin: origin, Host: host }))).status, origin).toBe(403);
    }
    // The probe's case: an https origin with the Host it names, on a plain-http server.
    const probe = await httpGet(url, upgradeHeaders({ Origin: `https://127.0.0.2:18788`, Host: "127.0.0.2:18788" }));
    expect(probe.status).toBe(403);
    expect((await httpGet(url, upgradeHeaders({ Origin: `http://${host}`, Host: host }))).status).toBe(101);
  });

  it("accepts configured allowed origins", async () => {
    const served = await startDispatcher({ runtime: null, allowedOrigins: ["https://app.example.com/"] });
    const client = await served.connect({ headers: { Origin: "https://app.example.com" } });
    expect(client.frames[0]?.type).toBe("hello");
    const other = await httpGet(
      wsPath(served.dispatcher.wsUrl),
      upgradeHeaders({ Origin: "https://other.example.com" }),
    );
    expect(other.status).toBe(403);
  });

  it("checks the token before the origin", async () => {
    const served = await startDispatcher({ runtime: null, token: TOKEN });
    const answer = await httpGet(wsPath(served.dispatcher.wsUrl), upgradeHeaders({ Origin: "http://evil.example" }));
    expect(answer.status).toBe(401);
  });

  it("has no WebSocket anywhere but /ws", async () => {
    const served = await startDispatcher({ runtime: null });
    const answer = await httpGet(`${served.dispatcher.url}/socket`, upgradeHeaders());
    expect(answer.status).toBe(404);
  });
});
