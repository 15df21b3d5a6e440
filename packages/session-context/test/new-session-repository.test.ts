// A session made for a turn (createSession forTurn, as sessionContext makes every new session) carries its git
// repository from the start, built inside the folder that is renamed into place: the repository must be one git
// itself accepts in every way (fsck, log, status, its own commits, gc, tags), as small as git allows, private, and
// the first turn must commit on top of its "session init" without making another.
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chat, sessionContext } from "../src/index.js";
import { doctorSessions } from "../src/entries/store.js";
import { writeSessionFolder } from "../src/store/session-folder.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";
import { chatTurn, plainGit } from "./helpers.js";

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

describe("a session created for a turn", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-new-session-repo-");
  });
  afterEach(() => store.cleanup());

  it("has a whole, private repository with the session init commit, and the lease folder, from the start", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    expect(readdirSync(dir).sort()).toEqual([".git", ".state", "context", "history", "meta.json", "workdir"]);
    expect(readdirSync(join(dir, ".state"))).toEqual(["turns"]);
    // Only what git cannot do without, our branch, our exclusions and the packs: no objects/info, refs/tags.
    expect(readdirSync(join(dir, ".git")).sort()).toEqual([
      "COMMIT_EDITMSG",
      "HEAD",
      "config",
      "info",
      "objects",
      "refs",
    ]);
    expect(readdirSync(join(dir, ".git", "refs"))).toEqual(["heads"]);
    // Its two objects (the empty tree and the commit) are one pack, as every commit's are: no fan-out folder.
    expect(readdirSync(join(dir, ".git", "objects"))).toEqual(["pack"]);
    const packFiles = readdirSync(join(dir, ".git", "objects", "pack")).sort();
    expect(packFiles).toHaveLength(2);
    for (const name of packFiles) expect(name).toMatch(/^pack-[0-9a-f]{40}\.(idx|pack)$/);
    expect(plainGit(dir, "log", "--format=%s%n%an <%ae>")).toBe("session init\nOpenProgram <openprogram@local>");
    expect(plainGit(dir, "rev-parse", "HEAD^{tree}")).toBe(EMPTY_TREE);
    expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling")).not.toThrow();
    const modes = (path: string): number => statSync(join(dir, ".git", path)).mode & 0o777;
    expect(modes("")).toBe(0o700);
    expect(modes("COMMIT_EDITMSG")).toBe(0o600);
    expect(modes("config")).toBe(0o600);
    for (const name of packFiles) expect(modes(`objects/pack/${name}`)).toBe(0o400);
    // The status is clean before any turn: workdir/.gitkeep, history/ and meta.json wait for the first commit.
    expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("?? meta.json\n?? workdir/.gitkeep");
  });

  it("takes the first turn's commit on top of session init, with a clean status and fsck", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    const sha = await chatTurn(store.db, "s", "turn_1", 2);
    expect(plainGit(dir, "rev-parse", "HEAD")).toBe(sha);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_1\nsession init");
    expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling")).not.toThrow();
  });

  it("takes git's own commit, a tag and gc on its smaller layout, and our next commit after them", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    // git itself, as the Python store or a person runs it: the folders it needs it makes, private.
    plainGit(dir, "add", "-A");
    plainGit(dir, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "-m", "python");
    plainGit(dir, "tag", "v1");
    plainGit(dir, "gc", "--quiet");
    expect(statSync(join(dir, ".git", "objects", "pack")).mode & 0o777).toBe(0o700);
    await chatTurn(store.db, "s", "turn_2", 2);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_2\npython\nsession init");
    expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling")).not.toThrow();
  });

  it("is what sessionContext makes for a new session: the turn commits once, on top of session init", async () => {
    const { runtime } = scriptedRuntime(["hello"]);
    let sawRepository = false;
    const sessionId = await sessionContext({ db: store.db, runtime, fromEnvironment: false }, async (session) => {
      sawRepository = existsSync(join(store.root, session.sessionId, ".git", "HEAD"));
      await chat("hi");
      return session.sessionId;
    });
    expect(sawRepository).toBe(true);
    const dir = join(store.root, sessionId);
    expect(plainGit(dir, "log", "--format=%s").split("\n")).toEqual([expect.stringMatching(/^turn /), "session init"]);
    expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(readdirSync(join(dir, ".state")).filter((name) => name.startsWith("git-init-"))).toEqual([]);
  });

  it("killed before its rename leaves a hidden folder, half a repository in it, that blocks nothing and the doctor removes", async () => {
    // What a kill leaves at any point of the build: here the whole folder, less the branch and the pack's index (as
    // if cut short), with git's read-only pack file in it.
    mkdirSync(store.root, { recursive: true });
    const leftover = join(store.root, ".creating-s-0123abcd");
    await writeSessionFolder(leftover, '{"id": "s"}', true);
    rmSync(join(leftover, ".git", "refs", "heads", "main"));
    const packFolder = join(leftover, ".git", "objects", "pack");
    for (const name of readdirSync(packFolder)) if (name.endsWith(".idx")) rmSync(join(packFolder, name));
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(leftover, old, old);
    const { runtime } = scriptedRuntime(["hello"]);
    await sessionContext({ db: store.db, sessionId: "s", runtime, fromEnvironment: false }, async () => chat("hi"));
    expect(plainGit(join(store.root, "s"), "log", "--format=%s").split("\n")).toEqual([
      expect.stringMatching(/^turn /),
      "session init",
    ]);
    const report = await doctorSessions({ db: store.db });
    expect(report.findings.map((finding) => [finding.kind, finding.path])).toEqual([["temp_leftover", leftover]]);
    await doctorSessions({ db: store.db, fix: true });
    expect(existsSync(leftover)).toBe(false);
    expect((await doctorSessions({ db: store.db })).findings).toEqual([]);
  });

  it("is made without a repository by default, which the first commit then makes (the lazy path is unchanged)", async () => {
    await store.db.createSession({ id: "lazy" });
    const dir = join(store.root, "lazy");
    expect(existsSync(join(dir, ".git"))).toBe(false);
    await chatTurn(store.db, "lazy", "turn_1", 2);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_1\nsession init");
    expect(readdirSync(join(dir, ".git")).sort()).toEqual([
      "COMMIT_EDITMSG",
      "HEAD",
      "config",
      "index",
      "info",
      "objects",
      "refs",
    ]);
    expect(() => plainGit(dir, "fsck", "--strict", "--no-dangling")).not.toThrow();
    expect(plainGit(dir, "status", "--porcelain", "--untracked-files=all")).toBe("");
  });
});
