// A checkpoint into the commit (issue 38): a turn's end that finds the write-ahead log past its limit makes HEAD
// durable instead of fsyncing every file the log names, and leaves one marker; after a reboot, a session's first
// read puts back from the commit the marker names what a power cut took, tore or rolled back, and nothing else.
// Real store, real git.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { currentBootId } from "../src/store/boot-id.js";
import { SessionPaths } from "../src/store/layout.js";
import {
  appendWal,
  COMMITTED_MARKER,
  committedMarkerOf,
  markerRecord,
  readWal,
  WAL_CHECKPOINT_BYTES,
} from "../src/store/session-wal.js";
import { checkpointIntoCommit } from "../src/store/wal-checkpoint.js";
import { checkpointWal } from "../src/store/wal-recovery.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { plainGit } from "./helpers.js";

let store: TempStore;
let db: SessionDB;
let paths: SessionPaths;
beforeEach(async () => {
  store = createTempStore("openprogram-wal-commit-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "checkpoint" });
  paths = new SessionPaths(store.root, "s");
});
afterEach(() => store.cleanup());

/** A turn whose three replies (each appended running, then finished) log more than the log's limit. */
async function longTurn(turnId: string): Promise<{ ids: string[]; files: Map<string, string> }> {
  const reply = "x".repeat(Math.ceil(WAL_CHECKPOINT_BYTES / 3) + 1_000);
  await db.beginTurn("s", turnId);
  const ids: string[] = [];
  for (let step = 0; step < 3; step++) {
    const node = await db.appendNode("s", { role: "llm", name: "m", caller: "", output: null }, { atHead: true });
    await db.updateNode("s", node.id, { output: `${step} ${reply}`, metadata: { status: "completed" } });
    ids.push(node.id);
  }
  await db.endTurn("s", turnId, { status: "idle" });
  const files = new Map<string, string>();
  for (const rel of ["meta.json", ...plainGit(paths.dir, "ls-files", "history").split("\n").filter(Boolean)])
    files.set(rel, readFileSync(join(paths.dir, rel), "utf8"));
  return { ids, files };
}

/** What the next process sees after a reboot: the marker names another boot. */
async function rebooted(commit: string): Promise<void> {
  await appendWal(paths.wal, [markerRecord({ commit, boot: "a-boot-before-the-power-cut" })], true);
}

const relOf = (files: Map<string, string>, id: string): string =>
  [...files.keys()].find((rel) => rel.endsWith(`-${id}.json`)) as string;

describe("a checkpoint into the commit", () => {
  it("leaves one marker naming HEAD and this boot, with every logged file in that commit as written", async () => {
    await longTurn("t1");
    const records = readWal(paths.wal);
    expect(records.map((record) => record.rel)).toEqual([COMMITTED_MARKER]);
    const head = plainGit(paths.dir, "rev-parse", "HEAD");
    expect(committedMarkerOf(records)).toEqual({ commit: head, boot: currentBootId() });
    expect(currentBootId()).not.toBe("");
    expect(plainGit(paths.dir, "status", "--porcelain")).toBe("");
    expect(plainGit(paths.dir, "fsck", "--no-progress")).toBe("");
  });

  it("after a reboot, puts back from HEAD each file a power cut took, tore or rolled back, once", async () => {
    const { ids, files } = await longTurn("t1");
    const [gone, torn, rolledBack] = ids.map((id) => relOf(files, id)) as [string, string, string];
    rmSync(join(paths.dir, gone));
    writeFileSync(join(paths.dir, torn), "");
    const finished = JSON.parse(files.get(rolledBack) as string) as Record<string, unknown>;
    writeFileSync(
      join(paths.dir, rolledBack),
      JSON.stringify({ ...finished, output: null, metadata: { status: "running" } }),
    );
    const meta = JSON.parse(files.get("meta.json") as string) as { updated_at: number };
    writeFileSync(paths.meta, JSON.stringify({ ...meta, head_id: null, updated_at: meta.updated_at - 5 }));
    await rebooted(plainGit(paths.dir, "rev-parse", "HEAD"));

    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(nodes.map((node) => (node.output as string).slice(0, 2))).toEqual(["0 ", "1 ", "2 "]);
    for (const [rel, text] of files) expect(readFileSync(join(paths.dir, rel), "utf8")).toBe(text);
    // Checked once: the marker now names this boot, and a file removed now stays removed for this boot's readers.
    expect(committedMarkerOf(readWal(paths.wal))?.boot).toBe(currentBootId());
    rmSync(join(paths.dir, gone));
    expect(await new SessionDB({ root: store.root }).loadNodes("s")).toHaveLength(2);
  });

  it("puts back from the commit the marker names, though a later HEAD's objects were lost too", async () => {
    const { ids, files } = await longTurn("t1");
    const checkpointed = plainGit(paths.dir, "rev-parse", "HEAD");
    const packFolder = join(paths.git, "objects", "pack");
    const packsBefore = new Set(readdirSync(packFolder));
    await db.beginTurn("s", "t2");
    await db.appendNode("s", { role: "user", name: "", output: "a short turn: no checkpoint" }, { atHead: true });
    await db.endTurn("s", "t2", { status: "idle" });
    expect(plainGit(paths.dir, "rev-parse", "HEAD")).not.toBe(checkpointed);
    // The cut took the later commit's pack (never fsynced) and a node file of the first turn.
    for (const name of readdirSync(packFolder)) if (!packsBefore.has(name)) rmSync(join(packFolder, name));
    const gone = relOf(files, ids[0] as string);
    rmSync(join(paths.dir, gone));
    await rebooted(checkpointed);
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(nodes.map((node) => String(node.output).slice(0, 2))).toEqual(["0 ", "1 ", "2 ", "a "]);
    expect(readFileSync(join(paths.dir, gone), "utf8")).toBe(files.get(gone));
  });

  it("puts nothing back without a reboot: a process that died took nothing from the page cache", async () => {
    const { ids, files } = await longTurn("t1");
    rmSync(join(paths.dir, relOf(files, ids[0] as string)));
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(nodes.map((node) => node.id)).toEqual(ids.slice(1));
  });

  it("leaves what a cut cannot have done: later writes of another store, a damaged file, a file HEAD never held", async () => {
    const { ids, files } = await longTurn("t1");
    const kept = new Map<string, string>();
    const write = (rel: string, text: string): void => {
      writeFileSync(join(paths.dir, rel), text);
      kept.set(rel, text);
    };
    const [finishedElsewhere, stillRunning, damaged] = ids.map((id) => relOf(files, id)) as [string, string, string];
    const node = (rel: string): Record<string, unknown> =>
      JSON.parse(files.get(rel) as string) as Record<string, unknown>;
    write(
      finishedElsewhere,
      JSON.stringify({ ...node(finishedElsewhere), output: "python", metadata: { status: "failed" } }),
    );
    // Running again under another id: not this node rolled back.
    write(stillRunning, JSON.stringify({ ...node(stillRunning), id: "other", metadata: { status: "running" } }));
    write(damaged, "{ not json, and not what a cut leaves");
    const meta = JSON.parse(files.get("meta.json") as string) as { updated_at: number };
    write("meta.json", JSON.stringify({ ...meta, title: "renamed later", updated_at: meta.updated_at + 5 }));
    write("history/0099-u-foreign.json", JSON.stringify({ id: "foreign", role: "user", output: "hi", seq: 99 }));
    await rebooted(plainGit(paths.dir, "rev-parse", "HEAD"));
    await new SessionDB({ root: store.root }).loadNodes("s");
    for (const [rel, text] of kept) expect(readFileSync(join(paths.dir, rel), "utf8")).toBe(text);
  });

  it("does not bring back a node's old file name once the node was moved to another seq", async () => {
    const { ids, files } = await longTurn("t1");
    // As the doctor moves the later of two nodes sharing a seq to a fresh one.
    const moved = relOf(files, ids[2] as string);
    const movedTo = moved.replace(/history\/\d{4}-/, "history/0098-");
    renameSync(join(paths.dir, moved), join(paths.dir, movedTo));
    await rebooted(plainGit(paths.dir, "rev-parse", "HEAD"));
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(existsSync(join(paths.dir, moved))).toBe(false);
    expect(nodes.map((node) => node.id)).toEqual(ids);
  });

  it("is not taken when HEAD lacks a logged file; a checkpoint file by file keeps the marker", async () => {
    await longTurn("t1");
    const marker = committedMarkerOf(readWal(paths.wal));
    await db.beginTurn("s", "t2");
    await db.appendNode("s", { role: "user", name: "", output: "not committed yet" }, { atHead: true });
    const records = readWal(paths.wal);
    expect(await checkpointIntoCommit(paths, records)).toBe(false);
    expect(readWal(paths.wal)).toEqual(records);
    await checkpointWal(paths);
    expect(readWal(paths.wal)).toEqual([markerRecord(marker as NonNullable<typeof marker>)]);
    await db.endTurn("s", "t2", { status: "idle" });
  });
});
