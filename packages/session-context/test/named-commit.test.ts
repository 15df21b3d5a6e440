// A long session's commit (issue 38: a turn's cost flat in the session's length) compares only the node files the
// store says changed since its last commit instead of lstat-ing every file of history/, and every file at one
// commit in 32. What it leaves must be what a full comparison leaves: git's own view clean, each turn's files in
// its commit, another process's journaled writes taken in; a node file changed in place (which neither the
// journal nor history/'s mtime shows) is taken in by the next full comparison.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { plainGit } from "./helpers.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore("openprogram-named-commit-");
  // git status would otherwise refresh .git/index, which makes the next commit compare every file (the index is
  // no longer the one this process wrote): the test looks on as a user's `git status` rarely does, every turn.
  process.env.GIT_OPTIONAL_LOCKS = "0";
});
afterEach(() => {
  delete process.env.GIT_OPTIONAL_LOCKS;
  store.cleanup();
});

async function turn(db: SessionDB, turnId: string, write: () => Promise<unknown>): Promise<string | null> {
  await db.beginTurn("long", turnId);
  await write();
  return db.endTurn("long", turnId, { status: "idle" });
}

describe("a long session's commit", () => {
  it("takes every change a full comparison would, and a file changed in place within 32 commits", async () => {
    const db = store.db;
    const dir = join(store.root, "long");
    await db.createSession({ id: "long" });
    const first = await db.appendNode("long", { role: "user", output: "first" }, { atHead: true, deferNameSync: true });
    await turn(db, "t0", async () => {
      for (let index = 0; index < 520; index++)
        await db.appendNode(
          "long",
          { role: "code", name: "f", caller: first.id, output: index },
          { deferNameSync: true },
        );
    });
    expect(plainGit(dir, "status", "--porcelain")).toBe("");

    // Named: a new node and an update of an old one, each in the turn's commit.
    let added = "";
    const sha = await turn(db, "t1", async () => {
      added = (await db.appendNode("long", { role: "user", output: "new" }, { atHead: true })).id;
      await db.updateNode("long", first.id, { output: "first, edited" });
    });
    const changed = plainGit(dir, "show", "--name-only", "--format=", sha as string)
      .split("\n")
      .sort();
    const fileOf = (id: string): string =>
      readdirSync(join(dir, "history")).find((name) => name.includes(id)) as string;
    expect(changed).toEqual(
      [`history/${fileOf(first.id)}`, `history/${fileOf(added)}`, "meta.json", "usage.json"].sort(),
    );
    expect(plainGit(dir, "status", "--porcelain")).toBe("");

    // Another process's journaled write is taken in too.
    await turn(db, "t2", async () => {
      await new SessionDB({ root: store.root }).appendNode("long", { role: "user", output: "other" }, { atHead: true });
    });
    expect(plainGit(dir, "status", "--porcelain")).toBe("");

    // A node file changed in place by hand: not seen by a named commit, taken in by the next full one.
    const old = fileOf(first.id);
    const text = readFileSync(join(dir, "history", old), "utf8");
    writeFileSync(join(dir, "history", old), text.replace("first, edited", "changed in place"));
    let inPlaceCommitted = -1;
    for (let index = 0; index < 32 && inPlaceCommitted < 0; index++) {
      await turn(db, `t_more_${index}`, () => db.appendNode("long", { role: "user", output: index }, { atHead: true }));
      if (plainGit(dir, "status", "--porcelain") === "") inPlaceCommitted = index;
    }
    // Not at the next commit (a named one: the change is invisible to it), but within 32.
    expect(inPlaceCommitted).toBeGreaterThan(0);
    expect(plainGit(dir, "show", `HEAD:history/${old}`)).toContain("changed in place");
    expect(() => plainGit(dir, "fsck", "--strict")).not.toThrow();
  });
});
