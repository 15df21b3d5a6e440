// A plain tool's running node is logged before the tool runs and its file held (AppendOptions.holdFile,
// store/held-files.ts): put in place by the tool's result, after HELD_FILE_DELAY_MS, or before the commit. Against
// a real store on disk, real child processes for "another process", and the scripted model.
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { agenticFunction, sessionContext, tool } from "../src/index.js";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { heldFileDelay, HELD_FILE_DELAY_MS } from "../src/store/held-files.js";
import { createTempStore, scriptedRuntime, waitFor, type TempStore } from "../src/testing/index.js";
import { childScript, runTsChild } from "./helpers.js";

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-held-files-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "held" });
});
afterEach(() => {
  heldFileDelay.ms = HELD_FILE_DELAY_MS;
  store.cleanup();
});

/** Runs one exec whose model calls `lookup` once (its body is `during`), then answers. */
async function runLookup(during: () => Promise<void>): Promise<void> {
  const { runtime } = scriptedRuntime([
    { reply: "", toolCalls: [{ id: "call_1", name: "lookup", arguments: { key: "a" } }] },
    "It is 1.",
  ]);
  const lookup = tool({
    name: "lookup",
    description: "Looks a key up.",
    input: z.object({ key: z.string() }),
    execute: async () => {
      await during();
      return 1;
    },
  });
  const answer = agenticFunction({ name: "answer", doc: "Answer." }, async (_input: object, { runtime: rt }) =>
    rt.exec("What is a?", { tools: [lookup] }),
  );
  await expect(sessionContext({ db, runtime, sessionId: "s" }, () => answer({}))).resolves.toBe("It is 1.");
}

/** The names of the nodes whose files are in place in history/ (read directly, not through a store's view). */
function namesInPlace(): string[] {
  const history = join(store.root, "s", "history");
  return readdirSync(history).map(
    (file) => (JSON.parse(readFileSync(join(history, file), "utf8")) as { name: string }).name,
  );
}

const lookupIn = async (reader: SessionDB) =>
  (await reader.loadNodes("s")).find((node) => node.name === "lookup")?.metadata.status;

async function expectHealthy(): Promise<void> {
  const report = await doctorSessions({ db, sessionId: "s" });
  expect(report.findings.filter((finding) => finding.kind !== "uncommitted_tail")).toEqual([]);
}

describe("a plain tool's held running node", () => {
  it("is put in place on its own once the tool outlasts the delay, so other readers see it running", async () => {
    await runLookup(async () => {
      // Another store in this process reads the files, as another process would.
      await waitFor(
        async () => (await lookupIn(new SessionDB({ root: store.root }))) === "running",
        "the tool's running node in place",
        10_000,
      );
    });
    expect(await lookupIn(new SessionDB({ root: store.root }))).toBe("completed");
    await expectHealthy();
  });

  it("stays in this process's view when the view is read again from the files", async () => {
    heldFileDelay.ms = 60_000;
    let seen: unknown;
    await runLookup(async () => {
      // A change to history/ nobody journaled makes the writer's own store read the folder again.
      const stray = join(store.root, "s", "history", "stray.txt");
      writeFileSync(stray, "x");
      rmSync(stray);
      seen = await lookupIn(db);
      expect(namesInPlace()).not.toContain("lookup");
    });
    expect(seen).toBe("running");
    await expectHealthy();
  });

  it("is left to its writer by another process reading the session, which sees the tool once it is done", async () => {
    heldFileDelay.ms = 60_000;
    let during: { code: number | null; stdout: string; stderr: string } | null = null;
    let inPlaceDuring: string[] = [];
    await runLookup(async () => {
      during = await runTsChild(childScript("read-or-append.ts"), [store.root, "s", "read"]);
      inPlaceDuring = namesInPlace();
    });
    const outcome = during as unknown as { code: number | null; stdout: string; stderr: string };
    expect(outcome.code, outcome.stderr).toBe(0);
    // It read the session as the files have it, and put nothing back from the log (it holds no lock: a live writer does).
    const names = (JSON.parse(outcome.stdout) as string[][]).map(([name]) => name);
    expect(names).toContain("answer");
    expect(names).not.toContain("lookup");
    expect(outcome.stderr).not.toMatch(/Restored/);
    expect(inPlaceDuring).toContain("answer");
    expect(inPlaceDuring).not.toContain("lookup");
    const after = await runTsChild(childScript("read-or-append.ts"), [store.root, "s", "read"]);
    expect(JSON.parse(after.stdout)).toContainEqual(["lookup", "completed"]);
    await expectHealthy();
  });

  it("keeps the session's lock until it is in place: another process's write waits, then lands after it", async () => {
    heldFileDelay.ms = 60_000;
    let child: Promise<{ code: number | null; stdout: string; stderr: string }> | null = null;
    await runLookup(async () => {
      child = runTsChild(childScript("read-or-append.ts"), [store.root, "s", "append"]);
      // The child is waiting for the lock (it marks itself wanted); the held file keeps it here.
      await waitFor(() => existsSync(join(store.root, "s", ".state", "lock.wanted")), "the child waiting", 20_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(namesInPlace()).not.toContain("lookup");
    });
    const outcome = await (child as unknown as Promise<{ code: number | null; stdout: string; stderr: string }>);
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).not.toMatch(/Restored/);
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    const lookup = nodes.find((node) => node.name === "lookup");
    const theirs = nodes.find((node) => node.output === "from another process");
    expect(lookup?.metadata.status).toBe("completed");
    expect(theirs).toBeDefined();
    await expectHealthy();
  });
});
