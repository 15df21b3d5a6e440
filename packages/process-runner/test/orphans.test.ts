import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isRunning, liveGroupMembers, programPath, useTempStore, waitFor } from "./helpers.js";

describe("no orphans when the parent itself dies", () => {
  const store = useTempStore();

  it("a child whose parent was SIGKILLed cancels, then takes its whole process group down", async () => {
    const parent = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        fileURLToPath(new URL("./children/parent-that-dies.ts", import.meta.url)),
        store.root,
        programPath("stubborn.ts"),
      ],
      {
        env: { ...process.env, OPENPROGRAM_HOME: store.home, OPENPROGRAM_PROVIDER: "none" },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const parentGone = new Promise<void>((resolve) => parent.once("exit", () => resolve()));
    const pids = await new Promise<{ sessionId: string; child: number; grandchild: number }>((resolve, reject) => {
      let buffered = "";
      parent.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString();
        const line = buffered.split("\n").find((candidate) => candidate.startsWith("{"));
        if (line) resolve(JSON.parse(line) as { sessionId: string; child: number; grandchild: number });
      });
      parent.once("exit", (code) => reject(new Error(`the parent exited (${code}) before reporting its child`)));
    });
    expect(isRunning(pids.child)).toBe(true);
    expect(isRunning(pids.grandchild)).toBe(true);

    parent.kill("SIGKILL");
    await parentGone;
    await waitFor(() => liveGroupMembers(pids.child).length === 0, "the orphaned group to take itself down");
    expect(isRunning(pids.child)).toBe(false);
    expect(isRunning(pids.grandchild)).toBe(false);

    // Nobody was left to record the end: reads report the status as recorded, and the store's crash recovery
    // (run when the session is next opened for a turn) records the unfinished calls as interrupted.
    expect((await store.db.getSession(pids.sessionId))?.status).toBe("running");
    expect(await store.db.recover(pids.sessionId)).toBe(true);
    expect((await store.db.getSession(pids.sessionId))?.status).toBe("idle");
    const nodes = await store.db.loadNodes(pids.sessionId);
    expect(nodes.map((node) => [node.name, node.metadata.status])).toEqual([
      ["host", "interrupted"],
      ["stubborn", "interrupted"],
      ["start_grandchild", "completed"],
    ]);
  });
});
