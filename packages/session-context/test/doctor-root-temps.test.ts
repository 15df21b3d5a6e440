// A process killed in the middle of writing a store-wide cache (index.json's flush, the usage cache) leaves its
// temp file in the sessions root: the doctor reports it and with --fix removes it, but never one young enough to
// belong to a writer still at work.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript } from "./helpers.js";

/** Runs the child until both its root writes are stuck before their rename, then kills it with SIGKILL. */
function killMidWrite(root: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", childScript("stuck-root-writes.ts"), root], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("stuck")) child.kill("SIGKILL");
    });
    child.on("error", reject);
    child.on("close", (_code, signal) =>
      signal === "SIGKILL" ? resolve() : reject(new Error(`the child ended without being killed: ${stderr}`)),
    );
  });
}

function rootTemps(root: string): string[] {
  return readdirSync(root)
    .filter((name) => /\.tmp-/.test(name))
    .sort();
}

describe("temp files a killed process leaves in the sessions root", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-doctor-root-");
  });
  afterEach(() => store.cleanup());

  it("are reported and removed once old enough, never while a writer could still be at work", async () => {
    await killMidWrite(store.root);
    const temps = rootTemps(store.root);
    expect(temps).toHaveLength(2);
    // The usage cache's own name starts with a dot, so its temp file starts with two.
    expect(temps.filter((name) => /^\.index\.json\.tmp-[0-9a-f]+$/.test(name))).toHaveLength(1);
    expect(temps.filter((name) => /^\.\.usage-cache\.json\.tmp-[0-9a-f]+$/.test(name))).toHaveLength(1);

    // Fresh: they could be a live writer's, so even --fix leaves them.
    const young = await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    expect(young.findings.filter((finding) => finding.kind === "temp_leftover")).toEqual([]);
    expect(rootTemps(store.root)).toEqual(temps);

    const hourAgo = new Date(Date.now() - 3_600_000);
    for (const name of temps) utimesSync(join(store.root, name), hourAgo, hourAgo);
    const found = await doctorSessions({ db: new SessionDB({ root: store.root }) });
    const leftovers = found.findings.filter((finding) => finding.kind === "temp_leftover");
    expect(leftovers.map((finding) => finding.path).sort()).toEqual(temps.map((name) => join(store.root, name)));
    expect(leftovers.every((finding) => finding.sessionId === null && !finding.fixed)).toBe(true);
    expect(rootTemps(store.root)).toEqual(temps);

    const fixed = await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    const removed = fixed.findings.filter((finding) => finding.kind === "temp_leftover");
    expect(removed.map((finding) => [finding.path, finding.fixed]).sort()).toEqual(
      temps.map((name) => [join(store.root, name), true]),
    );
    expect(rootTemps(store.root)).toEqual([]);
    expect(existsSync(join(store.root, "s", "meta.json"))).toBe(true);
    expect((await doctorSessions({ db: new SessionDB({ root: store.root }) })).findings).toEqual([]);
  });

  it("a deleted session's folder whose removal was cut short is reported and removed once old enough", async () => {
    await store.db.createSession({ id: "gone" });
    expect(await store.db.deleteSession("gone")).toBe(true);
    expect(readdirSync(store.root).filter((name) => name.startsWith(".deleted-"))).toEqual([]);
    // What a kill during the removal leaves: the folder moved aside, partly removed.
    const old = join(store.root, ".deleted-gone-0123abcd");
    const young = join(store.root, ".deleted-other-89abcdef");
    for (const path of [old, young]) {
      mkdirSync(join(path, "history"), { recursive: true });
      writeFileSync(join(path, "history", "0000-u-abcdefabcdef.json"), "{}");
    }
    utimesSync(old, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
    const report = await doctorSessions({ db: new SessionDB({ root: store.root }) });
    expect(report.findings.filter((finding) => finding.kind === "temp_leftover")).toMatchObject([
      { path: old, fixed: false },
    ]);
    await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(young)).toBe(true);
  });
});
