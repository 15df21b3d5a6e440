// The turn's commit is made in this process (src/store/git/): the repository it leaves must be one git itself
// accepts in every way: one commit per turn with the turn's files, a clean status, `git fsck --strict`, the same
// tree `git add -A` would stage, and git's own commits before and after ours.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { createTempStore, PYTHON_SESSIONS_FIXTURE, type TempStore } from "../src/testing/index.js";
import { assertHealthy, chatTurn, git, plainGit } from "./helpers.js";

/** git commit writes the message into .git/COMMIT_EDITMSG; the in-process commit does not: so git was not run. */
function assertCommittedInProcess(dir: string, turnId: string): void {
  const path = join(dir, ".git", "COMMIT_EDITMSG");
  expect(existsSync(path) ? readFileSync(path, "utf8") : "").not.toContain(turnId);
}

describe("in-process turn commits", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-commit-");
  });
  afterEach(() => store.cleanup());

  it("makes one commit per turn holding that turn's node files and meta.json, with git's own view clean", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    for (let turn = 0; turn < 3; turn++) {
      const sha = await chatTurn(store.db, "s", `turn_${turn}`);
      expect(sha).toMatch(/^[0-9a-f]{40}$/);
      expect(plainGit(dir, "rev-parse", "HEAD")).toBe(sha);
    }
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_2\nturn turn_1\nturn turn_0\nsession init");
    assertCommittedInProcess(dir, "turn_2");
    expect(plainGit(dir, "log", "--format=%an <%ae>", "-1")).toBe("OpenProgram <openprogram@local>");
    const changed = plainGit(dir, "show", "--name-only", "--format=", "HEAD").split("\n");
    const lastFour = readdirSync(join(dir, "history")).sort().slice(-4);
    // usage.json: the session's usage total, kept at turn end (it records the history's state too).
    expect(changed.sort()).toEqual([...lastFour.map((name) => `history/${name}`), "meta.json", "usage.json"].sort());
    assertHealthy(dir);
    const log = await store.db.gitLog("s");
    expect(log.map((entry) => entry.message)).toEqual(["turn turn_2", "turn turn_1", "turn turn_0", "session init"]);
  });

  it("moves a branch kept only in packed-refs, making its folder of loose refs", async () => {
    await store.db.createSession({ id: "packed" });
    const dir = join(store.root, "packed");
    await chatTurn(store.db, "packed", "turn_0");
    plainGit(dir, "pack-refs", "--all", "--prune");
    rmSync(join(dir, ".git", "refs", "heads"), { recursive: true, force: true });
    const sha = await chatTurn(store.db, "packed", "turn_1");
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(sha);
    expect(readFileSync(join(dir, ".git", "refs", "heads", "main"), "utf8")).toBe(`${sha}\n`);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_1\nturn turn_0\nsession init");
    assertHealthy(dir);
  });

  it("commits nothing when nothing changed, and keeps the repository private", async () => {
    await store.db.createSession({ id: "s" });
    await chatTurn(store.db, "s", "turn_a");
    expect(await store.db.commitTurn("s", "again")).toBeNull();
    const modes = execFileSync("find", [join(store.root, "s", ".git"), "-perm", "/077"], { encoding: "utf8" });
    expect(modes, "nothing in .git is readable by others").toBe("");
  });

  it("takes turns from git's own commits and gives git a repository it commits on (as Python's commit_turn does)", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    await chatTurn(store.db, "s", "turn_a");
    // What Python's commit_turn runs: git add -A, then git commit, in the same repository.
    writeFileSync(join(dir, "workdir", "python.txt"), "written by the Python store\n");
    plainGit(dir, "add", "-A");
    plainGit(dir, "-c", "user.name=OpenProgram", "-c", "user.email=openprogram@local", "commit", "-q", "-m", "python");
    await chatTurn(store.db, "s", "turn_b");
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_b\npython\nturn turn_a\nsession init");
    expect(plainGit(dir, "show", "--name-only", "--format=", "HEAD~1")).toBe("workdir/python.txt");
    assertHealthy(dir);
    writeFileSync(join(dir, "workdir", "python.txt"), "changed again\n");
    plainGit(dir, "add", "-A");
    plainGit(
      dir,
      "-c",
      "user.name=OpenProgram",
      "-c",
      "user.email=openprogram@local",
      "commit",
      "-q",
      "-m",
      "python 2",
    );
    assertHealthy(dir);
  });

  it("writes every object again into a repository made anew at the same path (what it knew was of the old one)", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    writeFileSync(join(dir, "notes.txt"), "the same bytes in both repositories");
    await chatTurn(store.db, "s", "turn_a", 1);
    expect(await store.db.deleteSession("s")).toBe(true);
    await store.db.createSession({ id: "s" });
    writeFileSync(join(dir, "notes.txt"), "the same bytes in both repositories");
    await chatTurn(store.db, "s", "turn_b", 1);
    assertHealthy(dir);
  });

  it("records removals, executable bits and files in nested folders as git add -A does", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    await chatTurn(store.db, "s", "turn_a");
    mkdirSync(join(dir, "workdir", "deep", "er"), { recursive: true });
    writeFileSync(join(dir, "workdir", "deep", "er", "a.txt"), "a");
    writeFileSync(join(dir, "workdir", "deep.txt"), "sorts before deep/ in git's order");
    writeFileSync(join(dir, "workdir", "run.sh"), "#!/bin/sh\n", { mode: 0o700 });
    writeFileSync(join(dir, "context", "notes.json"), "{}");
    await chatTurn(store.db, "s", "turn_b", 1);
    assertHealthy(dir);
    expect(plainGit(dir, "ls-tree", "HEAD", "workdir/run.sh").split(" ")[0]).toBe("100755");
    execFileSync("rm", ["-r", join(dir, "workdir", "deep")]);
    await chatTurn(store.db, "s", "turn_c", 1);
    expect(plainGit(dir, "show", "--name-status", "--format=", "HEAD")).toContain("D\tworkdir/deep/er/a.txt");
    assertHealthy(dir);
  });

  it("leaves a node file that does not parse out of the commit, and says so", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    await chatTurn(store.db, "s", "turn_a");
    const [first] = readdirSync(join(dir, "history")).sort();
    writeFileSync(join(dir, "history", first as string), "{torn");
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      await chatTurn(store.db, "s", "turn_b", 1);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings.join("\n")).toContain(`${first} is not a valid node file`);
    expect(plainGit(dir, "show", `HEAD:history/${first}`)).toMatch(/^\{"id"/);
    expect(() => plainGit(dir, "fsck", "--strict")).not.toThrow();
  });

  it("leaves a repository with an ignore file to git, which honours it", async () => {
    await store.db.createSession({ id: "s" });
    const dir = join(store.root, "s");
    await chatTurn(store.db, "s", "turn_a");
    writeFileSync(join(dir, "workdir", ".gitignore"), "*.log\n");
    writeFileSync(join(dir, "workdir", "debug.log"), "not for git");
    await chatTurn(store.db, "s", "turn_b", 1);
    expect(plainGit(dir, "ls-files")).not.toContain("debug.log");
    expect(plainGit(dir, "ls-files")).toContain("workdir/.gitignore");
    expect(readFileSync(join(dir, ".git", "COMMIT_EDITMSG"), "utf8"), "git made this one").toContain("turn_b");
    expect(plainGit(dir, "status", "--porcelain")).toBe("");
  });

  it("commits in repositories written by the Python store", async () => {
    const python = createTempStore("openprogram-commit-python-", { from: PYTHON_SESSIONS_FIXTURE });
    try {
      const sessions = readdirSync(python.root).filter((name) => !name.endsWith(".json") && !name.startsWith("."));
      for (const sessionId of sessions) {
        const dir = join(python.root, sessionId);
        const before = git(dir, "rev-list", "--count", "HEAD");
        await chatTurn(python.db, sessionId, "turn_ts", 2);
        expect(Number(git(dir, "rev-list", "--count", "HEAD"))).toBe(Number(before) + 1);
        assertCommittedInProcess(dir, "turn_ts");
        assertHealthy(dir);
      }
    } finally {
      python.cleanup();
    }
  });
});

describe("what a kill in the middle of a commit leaves", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-commit-kill-");
  });
  afterEach(() => store.cleanup());

  const old = new Date(Date.now() - 3_600_000);

  /** A session with one committed turn and one more turn's files written but not committed, as a kill leaves it. */
  async function interrupted(): Promise<{ dir: string; gitDir: string; head: string }> {
    await store.db.createSession({ id: "s" });
    await chatTurn(store.db, "s", "turn_a");
    const dir = join(store.root, "s");
    await store.db.appendNode("s", { role: "user", output: "written before the kill" }, { atHead: true });
    return { dir, gitDir: join(dir, ".git"), head: plainGit(dir, "rev-parse", "HEAD") };
  }

  async function assertRecovers(dir: string, before: string): Promise<void> {
    expect(() => plainGit(dir, "fsck", "--strict"), "git fsck passes with what the kill left").not.toThrow();
    const fresh = new SessionDB({ root: store.root });
    await chatTurn(fresh, "s", "turn_after", 1);
    expect(plainGit(dir, "rev-parse", "HEAD~1")).toBe(before);
    expect(plainGit(dir, "show", "--format=", "HEAD")).toContain("written before the kill");
    assertHealthy(dir);
    expect((await doctorSessions({ db: fresh })).healthy).toBe(true);
  }

  it("mid object write: a tmp_obj_ file, which git ignores and the next turn does not trip on", async () => {
    const { dir, gitDir, head } = await interrupted();
    mkdirSync(join(gitDir, "objects", "ab"), { recursive: true });
    writeFileSync(join(gitDir, "objects", "ab", "tmp_obj_1f2e3d4c"), Buffer.from([0x78, 0x01, 0x2b]));
    await assertRecovers(dir, head);
  });

  it("mid index write: an index.lock, which the doctor deletes and the next turn removes", async () => {
    const { dir, gitDir, head } = await interrupted();
    const lock = join(gitDir, "index.lock");
    writeFileSync(lock, "DIRC partial");
    utimesSync(lock, old, old);
    const found = await doctorSessions({ db: new SessionDB({ root: store.root }) });
    expect(found.findings.map((finding) => finding.kind)).toContain("git_lock_leftover");
    await assertRecovers(dir, head);
    expect(existsSync(lock)).toBe(false);
    // A lock left in a session no turn enters again: the doctor deletes it, and git commits there again.
    writeFileSync(lock, "DIRC partial");
    utimesSync(lock, old, old);
    const fixed = await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    expect(fixed.findings.map((finding) => [finding.kind, finding.fixed])).toContainEqual(["git_lock_leftover", true]);
    expect(fixed.healthy).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it("mid ref update: the index updated, the branch's .lock left and the branch not moved", async () => {
    const { dir, gitDir, head } = await interrupted();
    // What a kill between writing the index and renaming the ref's lock leaves: the turn staged, the lock behind.
    plainGit(dir, "add", "-A");
    const lock = join(gitDir, "refs", "heads", "main.lock");
    writeFileSync(lock, `${"f".repeat(40)}\n`);
    expect(() => plainGit(dir, "commit", "-q", "-m", "python"), "git refuses while the lock is there").toThrow();
    await assertRecovers(dir, head);
    expect(existsSync(lock)).toBe(false);
    plainGit(
      dir,
      "-c",
      "user.name=OpenProgram",
      "-c",
      "user.email=openprogram@local",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "python",
    );
  });
});
