// A turn lease written on another host counts as live unless a liveness source (a cluster's replica registry)
// knows its process: then recovery takes over a dead replica's turn and leaves a live replica's alone.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addOtherHostLiveness, SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

let store: TempStore;
const removers: Array<() => void> = [];
beforeEach(() => {
  store = createTempStore("openprogram-other-hosts-");
});
afterEach(() => {
  while (removers.length > 0) removers.pop()?.();
  store.cleanup();
});

/** A session whose turn runs (or ran) on `host` as `pid`: status running, a running node, that process's lease. */
async function runningOn(sessionId: string, host: string, pid: number): Promise<void> {
  await store.db.createSession({ id: sessionId });
  const node = await store.db.appendNode(sessionId, { role: "code", name: "f", metadata: { status: "running" } });
  mkdirSync(join(store.root, sessionId, ".state", "turns"), { recursive: true });
  writeFileSync(join(store.root, sessionId, ".state", "turns", `turn_${node.id}.lease`), `${pid} ${host} 0\n`);
  await store.db.setStatus(sessionId, "running");
}

describe("other hosts' liveness", () => {
  it("without a source, a lease from another host is live: nothing is recovered", async () => {
    await runningOn("remote", "replica-host-b", 4242);
    expect(await new SessionDB({ root: store.root }).recover("remote")).toBe(false);
  });

  it("a source that knows the process dead lets recovery take the turn over; alive keeps it; unknown falls through", async () => {
    await runningOn("dead", "replica-host-b", 4242);
    await runningOn("alive", "replica-host-c", 7);
    const asked: string[] = [];
    removers.push(
      addOtherHostLiveness((host, pid) => {
        asked.push(`${host}:${pid}`);
        if (host === "replica-host-b") return false;
        return undefined;
      }),
    );
    removers.push(addOtherHostLiveness((host) => (host === "replica-host-c" ? true : undefined)));
    const db = new SessionDB({ root: store.root });
    expect(await db.recover("alive")).toBe(false);
    expect((await db.getSession("alive"))?.status).toBe("running");
    expect(await db.recover("dead")).toBe(true);
    expect((await db.getSession("dead"))?.status).toBe("idle");
    expect(asked).toContain("replica-host-b:4242");
    expect(asked).toContain("replica-host-c:7");
  });
});
