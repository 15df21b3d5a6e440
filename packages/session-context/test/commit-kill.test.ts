// kill -9 of a process running turns, at points spread over its commits (objects, index, ref, registry flush):
// every acknowledged node survives, `git fsck --strict` passes, the doctor repairs what is left, and the next turn
// commits with git's own view clean. Heavy: eight child processes.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionContext } from "../src/index.js";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript, plainGit } from "./helpers.js";

const KILLS = 8;

/** Runs the turn loop, kills it `delayMs` after its first acknowledged node; resolves with the acknowledged ids. */
function runAndKill(root: string, delayMs: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", childScript("turn-loop.ts"), root, "k"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      timer ??= setTimeout(() => child.kill("SIGKILL"), delayMs);
    });
    child.on("error", reject);
    child.on("close", () => {
      if (timer) clearTimeout(timer);
      // Only whole lines were acknowledged.
      resolve(output.split("\n").slice(0, -1));
    });
  });
}

describe("kill -9 during turns and their in-process commits", () => {
  let store: TempStore;
  beforeAll(() => {
    store = createTempStore("openprogram-commit-kill-");
  });
  afterAll(() => store.cleanup());

  // Each kill starts a tsx child (about 3 s on a loaded 2-core machine): 8 of them stay well inside 180 s.
  it(
    `keeps every acknowledged node and a repository git accepts, over ${KILLS} kills`,
    { timeout: 180_000 },
    async () => {
      await store.db.createSession({ id: "k" });
      const dir = join(store.root, "k");
      const acknowledged: string[] = [];
      for (let kill = 0; kill < KILLS; kill++) {
        // Spread over the first 600 ms of turns: each turn is a few writes and one commit, so kills land everywhere.
        acknowledged.push(...(await runAndKill(store.root, Math.round(((kill + Math.random()) / KILLS) * 600))));
        // Killed before its first commit, the session has no repository yet (it is made whole or not at all).
        if (existsSync(join(dir, ".git")))
          expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling"), `git fsck after kill ${kill}`).not.toThrow();
      }
      const db = new SessionDB({ root: store.root });
      await sessionContext({ db, sessionId: "k", runtime: null, fromEnvironment: false }, () => undefined);
      const ids = new Set((await db.loadNodes("k")).map((node) => node.id));
      for (const id of acknowledged) expect(ids.has(id), `acknowledged node ${id} survived`).toBe(true);
      const report = await doctorSessions({ db, fix: true });
      expect(report.healthy, JSON.stringify(report.findings)).toBe(true);
      await db.beginTurn("k", "turn_final");
      await db.appendNode("k", { role: "user", output: "after the kills" }, { atHead: true });
      expect(await db.endTurn("k", "turn_final", { status: "idle" })).toMatch(/^[0-9a-f]{40}$/);
      expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
      expect(() => plainGit(dir, "fsck", "--strict")).not.toThrow();
      expect(acknowledged.length).toBeGreaterThan(KILLS);
    },
  );
});
