// Issue 30 item 7: a server reading a large session it has not cached keeps answering its other clients. The
// store reads such a session in slices of node files with the event loop let through between them.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { nodeFileName } from "../src/store/layout.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

const NODES = 3000;

describe("reading a session that is not cached", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore();
  });
  afterEach(() => store.cleanup());

  it("lets the event loop through while it reads the node files, and reads them all", async () => {
    await store.db.createSession({ id: "big" });
    const template = await store.db.appendNode("big", { role: "user", output: "hello" });
    const history = join(store.root, "big", "history");
    const [written] = readdirSync(history);
    const node = JSON.parse(readFileSync(join(history, written as string), "utf8")) as Record<string, unknown>;
    for (let seq = 1; seq < NODES; seq++) {
      const id = `n${String(seq).padStart(11, "0")}`;
      writeFileSync(join(history, nodeFileName(seq, "user", id)), JSON.stringify({ ...node, id, seq }));
    }
    // A new process's view: nothing of the session is cached.
    const reader = new SessionDB({ root: store.root });
    let turns = 0;
    let reading = true;
    const ticker = (async () => {
      while (reading) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        turns++;
      }
    })();
    const read = await reader.readHistory("big");
    reading = false;
    await ticker;
    expect(read.nodes).toHaveLength(NODES);
    expect(read.nodes[0]?.id).toBe(template.id);
    expect(read.problems).toEqual([]);
    // Six slices of 500 files: the loop turned between them (a read in one go lets it turn once at most).
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
