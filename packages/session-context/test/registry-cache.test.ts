// index.json is a cache of the sessions' own files (registry.ts): a turn's status reaches it shortly after it
// changes, without any turn waiting for it; a process killed before its flush leaves nothing the store, Python or
// the doctor cannot put right.
import { execFile, execFileSync, spawn } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, readFileSync, rmSync, watch, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sessionContext } from "../src/index.js";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { flushDelayMs, SessionRegistry } from "../src/store/registry.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript, runTsChild } from "./helpers.js";

const execFileAsync = promisify(execFile);

/** What Python's json module reads from index.json for one session (null when it is not listed). */
async function pythonStatus(root: string, sessionId: string): Promise<string | null> {
  const script =
    "import json,sys\ntry:\n  e=json.load(open(sys.argv[1]+'/index.json')).get(sys.argv[2])\nexcept FileNotFoundError:\n  e=None\n" +
    "print(json.dumps(e and e['status']))";
  // Asynchronous: a blocking spawn would starve the very flush the test waits for.
  const { stdout } = await execFileAsync("python3", ["-c", script, root, sessionId], { encoding: "utf8" });
  return JSON.parse(stdout) as string | null;
}

/** How long a check may wait for a timer-driven flush: a bound on a hang, not a speed assertion. */
const HANG_MS = 20_000;

async function within(ms: number, check: () => Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return check();
}

describe("the registry as a cache", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-registry-");
  });
  afterEach(() => store.cleanup());

  it("shows Python a running turn without being asked to flush, and the exact status once the turn ended", async () => {
    await store.db.createSession({ id: "s" });
    await store.db.beginTurn("s", "turn_a");
    await store.db.appendNode("s", { role: "user", output: "hi" }, { atHead: true });
    // The flush is due within a second (below); waiting longer only bounds a hang on a loaded machine.
    expect(await within(HANG_MS, async () => (await pythonStatus(store.root, "s")) === "running")).toBe(true);
    await store.db.endTurn("s", "turn_a", { status: "idle" });
    expect((await store.db.getSession("s"))?.status, "this process sees it at once").toBe("idle");
    expect(await within(HANG_MS, async () => (await pythonStatus(store.root, "s")) === "idle")).toBe(true);
  });

  it("makes a change wait at most a second for its flush, however slow the last flush was", () => {
    expect(flushDelayMs(0)).toBe(20);
    expect(flushDelayMs(10)).toBe(80);
    expect(flushDelayMs(60_000)).toBe(1_000);
  });

  it("flushRegistry(id) resolves once that session's change is on disk, in one write shared by callers at once", async () => {
    const ids = Array.from({ length: 10 }, (_, index) => `s${index}`);
    for (const id of [...ids, "busy"]) await store.db.createSession({ id });
    await store.db.flushRegistry();
    const writes: string[] = [];
    const watcher = watch(store.root, (_event, name) => {
      if (name === "index.json") writes.push(name);
    });
    // Another session keeps queueing changes meanwhile (a running turn): the callers must not write for it.
    let busy = true;
    const churn = (async () => {
      for (let change = 0; busy; change++) {
        await store.db.setStatus("busy", change % 2 === 0 ? "running" : "idle");
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    try {
      for (const id of ids) await store.db.setStatus(id, "needs_input");
      await Promise.all(
        ids.map(async (id) => {
          await store.db.flushRegistry(id);
          // On disk when the call resolves, for this caller's session.
          const onDisk = JSON.parse(readFileSync(join(store.root, "index.json"), "utf8")) as Record<
            string,
            { status: string }
          >;
          expect(onDisk[id]?.status).toBe("needs_input");
        }),
      );
    } finally {
      busy = false;
      await churn;
      await new Promise((resolve) => setTimeout(resolve, 50));
      watcher.close();
    }
    // One write carries all ten (two when the first flush was already under way); waiting for the whole queue
    // made each caller write again for the busy session.
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeLessThanOrEqual(3);
  });

  it("never makes a turn wait for the store-wide registry lock", async () => {
    await store.db.createSession({ id: "s" });
    await store.db.flushRegistry();
    // Another live process holds the registry lock (our own pid: alive, so never broken as stale).
    const lock = join(store.root, ".index.lock");
    writeFileSync(lock, `${process.pid} ${hostname()} held-by-test\n`);
    try {
      for (let turn = 0; turn < 3; turn++) {
        await store.db.beginTurn("s", `turn_${turn}`);
        await store.db.appendNode("s", { role: "user", output: `t${turn}` }, { atHead: true });
        expect(await store.db.endTurn("s", `turn_${turn}`, { status: "idle" })).toMatch(/^[0-9a-f]{40}$/);
      }
      expect(await pythonStatus(store.root, "s"), "nothing was written past the lock").toBe("idle");
      expect((await store.db.getSession("s"))?.preview).toBe("t2");
    } finally {
      execFileSync("rm", ["-f", lock]);
    }
    await store.db.flushRegistry();
    const entries = JSON.parse(execFileSync("cat", [join(store.root, "index.json")], { encoding: "utf8" })) as Record<
      string,
      { preview?: string }
    >;
    expect(entries.s?.preview).toBe("t2");
  });

  it("keeps a session created by a process killed before its registry flush, and lists it again", async () => {
    const result = await runTsChild(childScript("turn-then-die.ts"), [store.root, "lost", "after-end"]);
    expect(result.code).toBeNull();
    const db = new SessionDB({ root: store.root });
    expect((await db.listSessions()).map((session) => [session.id, session.title])).toEqual([["lost", "killed"]]);
    expect((await db.getSession("lost"))?.title).toBe("killed");
    expect((await db.loadNodes("lost")).map((node) => node.output)).toEqual(["hello"]);
    // The last status the killed process queued ("idle") was lost with it: the doctor (or the next turn) puts the
    // one left behind right, and Python reads it.
    const report = await doctorSessions({ db, fix: true });
    expect(report.healthy).toBe(true);
    await db.flushRegistry();
    expect(await pythonStatus(store.root, "lost"), "written back for Python too").toBe("idle");
  });

  it("recovers a turn killed before its running status reached the registry", async () => {
    const result = await runTsChild(childScript("turn-then-die.ts"), [store.root, "mid", "mid-turn"]);
    expect(result.code).toBeNull();
    const db = new SessionDB({ root: store.root });
    await sessionContext({ db, sessionId: "mid", runtime: null, fromEnvironment: false }, () => undefined);
    const nodes = await db.loadNodes("mid");
    expect(nodes.map((node) => node.metadata.status ?? null)).toEqual([null, "interrupted"]);
    expect(["running", "needs_input"]).not.toContain((await db.getSession("mid"))?.status);
    const report = await doctorSessions({ db, fix: true });
    expect(report.healthy).toBe(true);
    expect(execFileSync("git", ["fsck", "--strict"], { cwd: join(store.root, "mid"), encoding: "utf8" })).toBe("");
  });
});

describe("a flush whose store was removed", () => {
  it("drops the queued changes quietly when the store goes while the flush writes", async () => {
    const store = createTempStore("openprogram-registry-gone-");
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      await store.db.createSession({ id: "doomed" });
      const registry = SessionRegistry.of(store.root);
      expect(registry.hasPending(), "the create queued its entry").toBe(true);
      // flush() checks that the root exists before it writes; the root goes right after that check.
      const flushing = registry.flush();
      rmSync(store.root, { recursive: true, force: true });
      await flushing;
      await new Promise((resolve) => setImmediate(resolve));
      expect(registry.hasPending(), "nothing is left to retry").toBe(false);
      expect(warnings.filter((message) => message.includes("index.json"))).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      store.cleanup();
    }
  });
});

/** Writes a lock file naming this (live) process, as a sibling holding the registry lock leaves it. */
function holdRegistryLock(root: string): () => void {
  const lockPath = join(root, ".index.lock");
  mkdirSync(root, { recursive: true });
  writeFileSync(lockPath, `${process.pid} ${hostname()} heldbytest00\n`, { flag: "wx" });
  return () => rmSync(lockPath, { force: true });
}

/**
 * Holds the registry lock, then runs a child that creates a session and sets its status (both queued for
 * index.json; its own timer-driven flush then waits for the lock), says "created", awaits flushQueuedWrites()
 * or not, and exits. The lock is let go `releaseAfterMs` after "created", or once the child has exited.
 */
async function exitWhileLocked(
  store: TempStore,
  mode: "await" | "plain",
  releaseAfterMs: number | null,
): Promise<{ code: number | null; stderr: string }> {
  const script =
    `import { flushQueuedWrites, SessionDB } from ${JSON.stringify(new URL("../src/entries/store.js", import.meta.url).pathname)};\n` +
    "const [root, mode] = process.argv.slice(2);\n" +
    "const db = new SessionDB({ root });\n" +
    "await db.createSession({ id: 'exiting', title: 'queued' });\n" +
    "await db.setStatus('exiting', 'needs_input');\n" +
    "process.stdout.write('created\\n');\n" +
    "if (mode === 'await') await flushQueuedWrites();\n" +
    "process.exit(0);\n";
  const file = join(store.home, `exit-locked-${mode}.mts`);
  writeFileSync(file, script);
  const release = holdRegistryLock(store.root);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", file, store.root, mode], { stdio: "pipe" });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.on("data", (chunk: Buffer) => {
        if (releaseAfterMs !== null && chunk.toString().includes("created"))
          timer = setTimeout(release, releaseAfterMs);
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stderr }));
    });
  } finally {
    clearTimeout(timer);
    release();
  }
}

describe("the registry flush when another process holds the lock at exit", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-registry-exit-locked-");
  });
  afterEach(() => store.cleanup());

  it("flushQueuedWrites() before process.exit() waits for the lock and writes the queued status", async () => {
    // Held 2.5 s past "created": longer than the exit hook's own wait for the lock (1 s).
    const run = await exitWhileLocked(store, "await", 2_500);
    expect(run.code, run.stderr).toBe(0);
    expect(await pythonStatus(store.root, "exiting")).toBe("needs_input");
  });

  it("the exit hook alone gives up on a lock held past its wait, and says so naming index.json", async () => {
    const run = await exitWhileLocked(store, "plain", null);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`could not update ${join(store.root, "index.json")} on exit`);
    expect(run.stderr).toContain("openprogram sessions doctor");
    expect(await pythonStatus(store.root, "exiting")).toBeNull();
  });
});

describe("the registry flush when the process exits", () => {
  it("writes queued changes on process.exit(), and exits quietly when the root is gone", async () => {
    const store = createTempStore("openprogram-registry-exit-");
    try {
      const script =
        `import { SessionDB } from ${JSON.stringify(new URL("../src/entries/store.js", import.meta.url).pathname)};\n` +
        "const [root, mode] = process.argv.slice(2);\n" +
        "const db = new SessionDB({ root });\n" +
        "await db.createSession({ id: 'exiting', title: 'queued' });\n" +
        "if (mode === 'gone') (await import('node:fs')).rmSync(root, { recursive: true, force: true });\n" +
        "process.exit(0);\n";
      const file = join(store.home, "exit-child.mts");
      writeFileSync(file, script);
      const kept = await runTsChild(file, [store.root, "kept"]);
      expect(kept.code, kept.stderr).toBe(0);
      expect(await pythonStatus(store.root, "exiting"), "flushed by the exit hook").toBe("idle");
      const gone = await runTsChild(file, [join(store.home, "other"), "gone"]);
      expect(gone.code, gone.stderr).toBe(0);
      expect(gone.stderr).not.toMatch(/Error/);
    } finally {
      store.cleanup();
    }
  });
});
