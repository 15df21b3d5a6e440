// Issue 30, items 1 and 6, through the dispatcher: a web chat turn in a session whose `.git` would run programs
// runs none of them; a FIFO, socket or device in place of a store file never stops the event loop.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Runtime } from "@openprogram/session-context";
import { createRuntime } from "@openprogram/session-context/runtime";
import {
  createTempStore,
  plantSpecialFile,
  specialFileKinds,
  markersLeft,
  plantHostileGit,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type HostileGitVariant,
} from "@openprogram/session-context/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import {
  closeAll,
  httpGet,
  onCleanup,
  serveInChild,
  startDispatcher,
  TestClient,
  type TestDispatcher,
} from "./helpers.js";

let fake: FakeOpenAIServer;
let served: TestDispatcher;

beforeEach(async () => {
  fake = await startFakeOpenAIServer(() => "ok");
  const runtime = createRuntime({ provider: "openai", baseUrl: fake.baseUrl, model: "fake-model", maxRetries: 0 });
  served = await startDispatcher({ runtime: runtime as Runtime });
});

afterEach(async () => {
  await closeAll();
  await fake.close();
});

describe("a web chat turn in a session repository that would run programs", () => {
  const variants: HostileGitVariant[] = ["hooks", "hooks_path", "fsmonitor", "include", "signing"];
  it.each(variants)("%s: the turn commits and nothing runs", async (variant) => {
    const client = await served.connect();
    client.send({ type: "chat", text: "first" });
    const first = await client.next("turn_done");
    const markers = join(served.store.home, `markers-${variant}`);
    plantHostileGit(join(served.store.root, first.session_id), variant, markers);
    const ref = join(served.store.root, first.session_id, ".git", "refs", "heads", "main");
    const before = readFileSync(ref, "utf8");
    client.send({ type: "chat", session_id: first.session_id, text: "second" });
    const session = await client.next("session", (frame) => frame.session_id === first.session_id && !frame.created);
    await client.next("turn_done", (frame) => frame.turn_id === session.turn_id);
    expect(markersLeft(markers)).toEqual([]);
    // The second turn moved the branch: committed by the in-process writer, which runs nothing.
    expect(readFileSync(ref, "utf8")).not.toBe(before);
  });
});

describe("a FIFO, socket or device file in a session, on a server in a child process", () => {
  const CHILD = fileURLToPath(new URL("./fixtures/serve-child.mjs", import.meta.url));
  const TOKEN = "special-files-token-0123456789";

  it("get_session answers for each (an error naming the file or the session), and /healthz keeps answering", async () => {
    const store = createTempStore("openprogram-special-serve-");
    onCleanup(() => store.cleanup());
    const planted: Array<{ id: string; path: string }> = [];
    for (const kind of specialFileKinds()) {
      for (const position of ["meta.json", "node"]) {
        const id = `${kind}_${position === "meta.json" ? "meta" : "node"}`;
        await store.db.createSession({ id });
        await store.db.beginTurn(id, "turn_1");
        const node = await store.db.appendNode(id, { role: "user", output: "hello" }, { atHead: true });
        await store.db.endTurn(id, "turn_1", { status: "idle" });
        const history = join(store.root, id, "history");
        const nodeFile = readdirSync(history).find((name) => name.includes(node.id));
        const path = position === "meta.json" ? join(store.root, id, "meta.json") : join(history, nodeFile as string);
        plantSpecialFile(path, kind);
        planted.push({ id, path });
      }
    }
    const served = await serveInChild(CHILD, { OPENPROGRAM_TOKEN: TOKEN, OPENPROGRAM_PROVIDER: "none" }, store.home);
    const client = await TestClient.connect(`${served.wsUrl}?token=${TOKEN}`);
    onCleanup(() => client.close());
    const health = new URL(served.wsUrl);
    health.protocol = "http:";
    health.pathname = "/healthz";
    health.search = "";
    for (const { id, path } of planted) {
      const answer = await client.request({ type: "get_session", session_id: id }, "session_detail");
      // meta.json refused as the kind of file it is; a node file left out of the detail, which still answers.
      if (answer.type === "error") expect(answer.message).toContain(`${path} is a`);
      else expect(path).toContain("history");
      expect((await httpGet(health.toString())).status).toBe(200);
    }
    const list = await client.request({ type: "list_sessions" }, "sessions");
    expect(JSON.stringify(list)).toContain("fifo_node");
  }, 120_000);
});
