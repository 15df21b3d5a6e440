// Spare files (spare-files.ts): a turn's node writes rename empty files made ahead in `.state/spare/` into place
// instead of creating a temp file each; the session's next turn takes those its last one left, and an idle spell,
// the session's deletion, a process's exit and the next turn after a kill leave none.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { SessionPaths } from "../src/store/layout.js";
import {
  forgetSpareStock,
  MAX_SPARE_STOCKS,
  openSpareStock,
  SPARE_IDLE_MS,
  SPARE_STOCK,
  takeSpare,
} from "../src/store/spare-files.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript, runTsChild } from "./helpers.js";

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-spares-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "spares" });
});
afterEach(() => {
  // Each test's stocks go with its store: a stock outlives its session's last turn, and only a few are made at once.
  for (const id of ["s", "exits", ...Array.from({ length: MAX_SPARE_STOCKS + 1 }, (_, index) => `many${index}`)])
    forgetSpareStock(new SessionPaths(store.root, id));
  store.cleanup();
});

const spareFolder = (): string => join(store.root, "s", ".state", "spare");
const spareNames = (): string[] => (existsSync(spareFolder()) ? readdirSync(spareFolder()).sort() : []);

/**
 * Waits (a few ms at a time) until the stock holds `count` spare files, made and handed over: a file is on disk
 * a moment before the event loop is told its creation completed.
 */
async function stockOf(count: number): Promise<string[]> {
  for (let wait = 0; ; wait++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    if (spareNames().length >= count) return spareNames();
    if (wait > 500) throw new Error(`the stock never reached ${count}: ${spareNames().join(", ")}`);
  }
}

/** A pid no process has now: a child's, once it has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("spare files", () => {
  it("a turn's node write renames a spare made ahead into place; the rest are removed once the session is idle", async () => {
    await db.beginTurn("s", "turn_a");
    const before = await stockOf(SPARE_STOCK);
    expect(before.every((name) => name.startsWith(`${process.pid}-`))).toBe(true);
    const inodes = new Map(before.map((name) => [lstatSync(join(spareFolder(), name)).ino, name]));

    const node = await db.appendNode("s", { role: "code", name: "work", output: { ok: 1 } });
    // The node file is one of the spares (the same inode), renamed into history/ with the node's whole text.
    const file = readdirSync(join(store.root, "s", "history")).find((name) => name.endsWith(`-${node.id}.json`));
    expect(file).toBeDefined();
    const path = join(store.root, "s", "history", file as string);
    expect(inodes.has(lstatSync(path).ino)).toBe(true);
    expect(JSON.parse(readFileSync(path, "utf8"))).toMatchObject({ id: node.id, output: { ok: 1 } });
    // No temp file was made beside it, and another spare is made in its place.
    expect(readdirSync(join(store.root, "s", "history")).filter((name) => name.includes(".tmp-"))).toEqual([]);
    await stockOf(SPARE_STOCK);
    expect(spareNames()).not.toContain(inodes.get(lstatSync(path).ino));

    await db.updateNode("s", node.id, { output: { ok: 2 } });
    expect((await db.getNode("s", node.id))?.output).toEqual({ ok: 2 });
    await db.endTurn("s", "turn_a", { status: "idle" });
    // A fresh reader sees what was written.
    expect((await new SessionDB({ root: store.root }).getNode("s", node.id))?.output).toEqual({ ok: 2 });
    // Kept for the session's next turn a while, then removed.
    expect(spareNames().length).toBe(SPARE_STOCK);
    await new Promise((resolve) => setTimeout(resolve, SPARE_IDLE_MS + 300));
    expect(spareNames()).toEqual([]);
  });

  it("the session's next turn takes the spares its last one left, and a deletion meanwhile removes them", async () => {
    await db.beginTurn("s", "turn_a");
    await db.appendNode("s", { role: "user", output: "one" }, { atHead: true });
    await db.endTurn("s", "turn_a", { status: "idle" });
    const left = await stockOf(SPARE_STOCK);
    await db.beginTurn("s", "turn_b");
    // No new spare was made: the ones left are the stock.
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(spareNames()).toEqual(left);
    await db.appendNode("s", { role: "user", output: "two" }, { atHead: true });
    await db.endTurn("s", "turn_b", { status: "idle" });

    // Deleted at once after its turn: the spares go with it, and a session made again under its id writes as new.
    expect(await db.deleteSession("s")).toBe(true);
    expect(existsSync(join(store.root, "s"))).toBe(false);
    await db.createSession({ id: "s", title: "again" });
    await db.beginTurn("s", "turn_c");
    const node = await db.appendNode("s", { role: "user", output: "three" }, { atHead: true });
    await db.endTurn("s", "turn_c", { status: "idle" });
    expect((await db.loadNodes("s")).map((each) => each.id)).toEqual([node.id]);
  });

  it("the turn's end renames a spare into place as the session's usage total too", async () => {
    await db.beginTurn("s", "turn_a");
    await db.appendNode("s", { role: "user", output: "one" }, { atHead: true });
    const ready = await stockOf(SPARE_STOCK);
    const inodes = new Set(ready.map((name) => lstatSync(join(spareFolder(), name)).ino));

    await db.endTurn("s", "turn_a", { status: "idle" });

    const total = join(store.root, "s", "usage.json");
    expect(inodes.has(lstatSync(total).ino)).toBe(true);
    expect(JSON.parse(readFileSync(total, "utf8"))).toMatchObject({ version: 1, buckets: [] });
    expect(readdirSync(join(store.root, "s")).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("writes outside a turn create their own temp files, and leave no spare", async () => {
    const node = await db.appendNode("s", { role: "user", output: "hello" }, { atHead: true });
    expect((await db.getNode("s", node.id))?.output).toBe("hello");
    expect(spareNames()).toEqual([]);
  });

  it("the next turn removes the spares of a process no longer alive, and keeps a live one's", async () => {
    mkdirSync(spareFolder(), { recursive: true });
    const dead = `${deadPid()}-0badc0de`;
    const live = `${process.ppid}-0badf00d`;
    writeFileSync(join(spareFolder(), dead), "");
    writeFileSync(join(spareFolder(), live), "");
    await db.beginTurn("s", "turn_b");
    expect(spareNames()).not.toContain(dead);
    expect(spareNames()).toContain(live);
    await db.endTurn("s", "turn_b", { status: "idle" });
    expect(spareNames().filter((name) => !name.startsWith(`${process.pid}-`))).toEqual([live]);
  });

  it("a link planted at .state/spare is never written through: the turn's writes make their own temp files", async () => {
    const elsewhere = join(store.root, "..", `elsewhere-${process.pid}`);
    mkdirSync(elsewhere, { recursive: true });
    try {
      mkdirSync(join(store.root, "s", ".state"), { recursive: true });
      symlinkSync(elsewhere, spareFolder());
      await db.beginTurn("s", "turn_c");
      const node = await db.appendNode("s", { role: "code", name: "work", output: 1 });
      await db.endTurn("s", "turn_c", { status: "idle" });
      expect((await db.getNode("s", node.id))?.output).toBe(1);
      expect(readdirSync(elsewhere)).toEqual([]);
      expect(lstatSync(spareFolder()).isSymbolicLink()).toBe(true);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("a spare replaced by a link, or written to, is not used: the write makes its own temp file", async () => {
    const outside = join(store.root, "..", `outside-${process.pid}.txt`);
    writeFileSync(outside, "keep me");
    try {
      await db.beginTurn("s", "turn_d");
      const [first, second] = await stockOf(SPARE_STOCK);
      rmSync(join(spareFolder(), first as string));
      symlinkSync(outside, join(spareFolder(), first as string));
      // One written to behind our back is not used either: the node's text would end in its bytes.
      writeFileSync(join(spareFolder(), second as string), "x".repeat(4096));
      const node = await db.appendNode("s", { role: "code", name: "work", output: "mine" });
      await db.endTurn("s", "turn_d", { status: "idle" });
      expect(readFileSync(outside, "utf8")).toBe("keep me");
      expect((await new SessionDB({ root: store.root }).getNode("s", node.id))?.output).toBe("mine");
      // The links were dropped, not followed.
      expect(spareNames().every((name) => !lstatSync(join(spareFolder(), name)).isSymbolicLink())).toBe(true);
    } finally {
      rmSync(outside, { force: true });
    }
  });

  it("a spare that is another name of an empty file elsewhere (a hard link) is not used", async () => {
    const emptyOutside = join(store.root, "..", `empty-outside-${process.pid}.txt`);
    writeFileSync(emptyOutside, "");
    try {
      await db.beginTurn("s", "turn_e");
      for (const name of await stockOf(SPARE_STOCK)) {
        rmSync(join(spareFolder(), name));
        linkSync(emptyOutside, join(spareFolder(), name));
      }
      const node = await db.appendNode("s", { role: "code", name: "work", output: "mine" });
      await db.endTurn("s", "turn_e", { status: "idle" });
      expect(readFileSync(emptyOutside, "utf8")).toBe("");
      expect((await new SessionDB({ root: store.root }).getNode("s", node.id))?.output).toBe("mine");
    } finally {
      rmSync(emptyOutside, { force: true });
    }
  });

  it("a session forgotten (deleted) hands out none of its spares again", async () => {
    const paths = new SessionPaths(store.root, "s");
    mkdirSync(paths.state, { recursive: true });
    const close = openSpareStock(paths);
    await stockOf(SPARE_STOCK);
    forgetSpareStock(paths);
    expect(takeSpare(paths)).toBeNull();
    expect(spareNames()).toEqual([]);
    close();
  });

  it("only the first few sessions in turns at once get spares; the others write as before", async () => {
    const ids = Array.from({ length: MAX_SPARE_STOCKS + 1 }, (_, index) => `many${index}`);
    for (const id of ids) {
      await db.createSession({ id, title: id });
      await db.beginTurn(id, "turn_many");
    }
    const folderOf = (id: string): string => join(store.root, id, ".state", "spare");
    const last = ids[MAX_SPARE_STOCKS] as string;
    expect(existsSync(folderOf(last)) ? readdirSync(folderOf(last)) : []).toEqual([]);
    for (const id of ids) {
      const node = await db.appendNode(id, { role: "user", output: id }, { atHead: true });
      expect((await db.getNode(id, node.id))?.output).toBe(id);
      await db.endTurn(id, "turn_many", { status: "idle" });
    }
    // The first sessions' spares wait for their next turns (a replacement may still be being made).
    for (let wait = 0; readdirSync(folderOf(ids[0] as string)).length < SPARE_STOCK; wait++) {
      if (wait > 500) throw new Error("the first session's stock was never made up again");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(existsSync(folderOf(last)) ? readdirSync(folderOf(last)) : []).toEqual([]);
  });

  it("a process that exits during a turn leaves no spare behind", async () => {
    const result = await runTsChild(childScript("exit-mid-turn.ts"), [store.root, "exits"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const made = JSON.parse(result.stdout) as string[];
    expect(made.length).toBe(SPARE_STOCK);
    expect(readdirSync(join(store.root, "exits", ".state", "spare"))).toEqual([]);
  });
});
