import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agenticFunction, InvalidInputError } from "@openprogram/session-context";
import { createTempStore, removeTree, type TempStore } from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createDispatcher, ListenError, WebAssetsMissingError, type ServedProgram } from "../src/index.js";
import { loadWebAssets } from "../src/static-files.js";
import { closeAll, onCleanup, startDispatcher } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(async () => {
  await closeAll();
  store.cleanup();
});

const noop = agenticFunction({ name: "noop", doc: "Does nothing." }, async () => "ok");

describe("createDispatcher refuses unusable options before listening", () => {
  const refused: Array<[string, Parameters<typeof createDispatcher>[0], RegExp]> = [
    ["a program name with a slash", { programs: { "a/b": noop } }, /programs: the name "a\/b"/],
    [
      "a program that is neither kind",
      { programs: { x: 42 as unknown as ServedProgram } },
      /programs.x must be an agentic function or an object with a run\(input\) method/,
    ],
    ["a port out of range", { port: 70_000 }, /port 70000 must be an integer/],
    ["a negative grace", { port: 0, shutdownGraceMs: -1 }, /shutdownGraceMs -1/],
    [
      "an allowed origin that is not one",
      { port: 0, allowedOrigins: ["example.com"] },
      /allowedOrigins: "example.com" is not an origin/,
    ],
    ["a limit of zero turns", { port: 0, limits: { maxConcurrentTurns: 0 } }, /limits.maxConcurrentTurns 0 must be/],
    [
      "a limit that does not exist",
      { port: 0, limits: { maxSessions: 3 } as never },
      /limits.maxSessions is not a limit; the limits are: maxConcurrentTurns/,
    ],
    [
      "a headers timeout longer than the request timeout",
      { port: 0, limits: { headersTimeoutMs: 5000, requestTimeoutMs: 1000 } },
      /headersTimeoutMs \(5000\) must not exceed limits.requestTimeoutMs \(1000\)/,
    ],
  ];
  it.each(refused)("%s", async (_name, options, message) => {
    await expect(createDispatcher({ ...options, db: store.db, runtime: null })).rejects.toThrow(InvalidInputError);
    await expect(createDispatcher({ ...options, db: store.db, runtime: null })).rejects.toThrow(message);
  });

  it("a db and a sessionsRoot that disagree", async () => {
    await expect(
      createDispatcher({ port: 0, db: store.db, sessionsRoot: "/elsewhere", runtime: null }),
    ).rejects.toThrow(/disagree/);
  });

  it("a port already in use, with what to do", async () => {
    const first = await startDispatcher({ runtime: null });
    const attempt = createDispatcher({ port: first.dispatcher.port, db: store.db, runtime: null });
    await expect(attempt).rejects.toThrow(ListenError);
    await expect(createDispatcher({ port: first.dispatcher.port, db: store.db, runtime: null })).rejects.toThrow(
      /already in use; stop the other process or pick another --port/,
    );
  });
});

describe("the web page's files", () => {
  it("are found beside src/ (and dist/), and a missing directory is a clear error", () => {
    const assets = loadWebAssets();
    expect([...assets.keys()].sort()).toEqual([
      "/",
      "/app.js",
      "/branches.js",
      "/budgets.js",
      "/connection.js",
      "/format-value.js",
      "/index.html",
      "/input-form.js",
      "/json-tree.js",
      "/keep-open.js",
      "/markdown.js",
      "/mcp-servers.js",
      "/model-calls.js",
      "/node-view.js",
      "/questions.js",
      "/style.css",
      "/summary-block.js",
      "/tool-nodes.js",
      "/usage.js",
    ]);
    expect(() => loadWebAssets("/nonexistent/web")).toThrow(WebAssetsMissingError);
    expect(() => loadWebAssets("/nonexistent/web")).toThrow(/reinstall @openprogram\/dispatcher/);
    const empty = mkdtempSync(join(tmpdir(), "openprogram-web-"));
    onCleanup(() => removeTree(empty));
    writeFileSync(join(empty, "notes.txt"), "not served");
    expect(() => loadWebAssets(empty)).toThrow(/index.html is missing/);
  });

  it("the dispatcher reports its addresses", async () => {
    const served = await startDispatcher({ runtime: null });
    const { dispatcher } = served;
    expect(dispatcher.host).toBe("127.0.0.1");
    expect(dispatcher.port).toBeGreaterThan(0);
    expect(dispatcher.url).toBe(`http://127.0.0.1:${dispatcher.port}`);
    expect(dispatcher.wsUrl).toBe(`ws://127.0.0.1:${dispatcher.port}/ws`);
    // shutdown is idempotent.
    await Promise.all([dispatcher.shutdown("first"), dispatcher.shutdown("second")]);
    await dispatcher.close();
    expect(served.logs.filter((entry) => entry.event === "shutdown_complete")).toHaveLength(1);
  });
});
