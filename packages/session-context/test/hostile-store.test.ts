// What a hostile probe broke in the store (issue 13, items 1-3, 9, 10, 13, 14), tried as classes:
// every kind of thing that can sit where a session goes, every link the store could write
// through, every way a session's .git can be damaged inside an enclosing repository, every
// shape of a corrupt meta.json. The rule each test checks: refused with a clear, typed error,
// and nothing outside what the call itself created is changed.
import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  agenticFunction,
  CorruptMetaError,
  GitError,
  InvalidSessionIdError,
  OpenProgramError,
  sessionContext,
} from "../src/index.js";
import { assertValidSessionId, doctorSessions, SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { git } from "./helpers.js";

let store: TempStore;
let outside: string;
beforeEach(() => {
  store = createTempStore();
  outside = mkdtempSync(join(tmpdir(), "openprogram-outside-"));
});
afterEach(() => {
  store.cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const note = agenticFunction({ name: "note", doc: "Record a note." }, async ({ text }: { text: string }) => text);

/** One turn that records a node in the session; resolves to the session id. */
function turn(db: SessionDB, sessionId: string, text = "hello"): Promise<string> {
  return sessionContext({ db, sessionId, runtime: null, source: "test" }, async (session) => {
    await note({ text });
    return session.sessionId;
  });
}

/** Every entry below `dir` (not following links): type, and content or link target. */
function snapshot(dir: string): Record<string, string> {
  const entries: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const name of readdirSync(current)) {
      const path = join(current, name);
      const stat = lstatSync(path);
      const key = relative(dir, path);
      // The session lock is a lease its holder keeps a moment after each write: a transient file, not content.
      if (key.endsWith(join(".state", "lock"))) continue;
      if (stat.isSymbolicLink()) entries[key] = `link -> ${readlinkSync(path)}`;
      else if (stat.isDirectory()) {
        entries[key] = "dir";
        walk(path);
      } else entries[key] = `file ${readFileSync(path, "base64")}`;
    }
  };
  walk(dir);
  return entries;
}

/** The rejection of `work`, which must be one of our typed errors. */
async function refusal(work: Promise<unknown>): Promise<OpenProgramError> {
  const error = await work.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error, "the call was refused").toBeInstanceOf(OpenProgramError);
  return error as OpenProgramError;
}

describe("session ids that name the store's own files or read as options", () => {
  const refused = [
    "index.json",
    "INDEX.JSON",
    "Index.Json",
    "index.json.corrupt-1700000000000",
    "index.json.tmp",
    "-x",
    "--session",
    "-",
    ".index.lock",
    ".hidden",
  ];

  it.each(refused)("refuses %j before anything is touched", async (sessionId) => {
    await store.db.createSession({ id: "keep", title: "Kept", extra: { note: "x" } });
    await store.db.updateSession("keep", { pinned: true, archived: true, preview: "p" });
    await store.db.flushRegistry(); // the coalesced index.json write lands before the snapshot, not between two
    const before = snapshot(store.root);
    expect(() => assertValidSessionId(sessionId)).toThrow(InvalidSessionIdError);
    let ran = false;
    const error = await refusal(
      sessionContext({ db: store.db, sessionId, runtime: null }, () => {
        ran = true;
      }),
    );
    expect(error.code).toBe("invalid_session_id");
    expect(error.message).toMatch(/index\.json|'-'|'\.'/);
    expect(ran).toBe(false);
    await expect(store.db.openSession(sessionId)).rejects.toBeInstanceOf(InvalidSessionIdError);
    await expect(store.db.deleteSession(sessionId)).rejects.toBeInstanceOf(InvalidSessionIdError);
    expect(snapshot(store.root)).toEqual(before);
  });
});

describe("a path that exists but is not a session", () => {
  /** Each shape something foreign can have at a session's path; `link` ones are links to outside the root. */
  const shapes: Array<{ name: string; make: (path: string) => void; lostMeta?: boolean; link?: boolean }> = [
    { name: "a file", make: (path) => writeFileSync(path, "keep\n") },
    { name: "an empty folder", make: (path) => mkdirSync(path) },
    {
      name: "a folder of someone's files",
      make: (path) => {
        mkdirSync(join(path, "sub"), { recursive: true });
        writeFileSync(join(path, "a.txt"), "mine\n");
        writeFileSync(join(path, "sub", "b.txt"), "mine too\n");
      },
    },
    {
      name: "a session that lost its meta.json",
      lostMeta: true,
      make: (path) => {
        mkdirSync(join(path, "history"), { recursive: true });
        writeFileSync(join(path, "history", "0000-u-aaaaaaaaaaaa.json"), '{"id":"aaaaaaaaaaaa","role":"user"}');
      },
    },
    {
      name: "a link to a folder outside the root",
      link: true,
      make: (path) => {
        writeFileSync(join(outside, "precious.txt"), "outside\n");
        symlinkSync(outside, path);
      },
    },
    {
      name: "a link to a real session outside the root",
      link: true,
      make: (path) => {
        mkdirSync(join(outside, "sessions", "real", "history"), { recursive: true });
        writeFileSync(join(outside, "sessions", "real", "meta.json"), JSON.stringify({ id: "real", head_id: null }));
        symlinkSync(join(outside, "sessions", "real"), path);
      },
    },
    { name: "a dangling link", link: true, make: (path) => symlinkSync(join(outside, "nothing"), path) },
  ];

  it.each(shapes)("$name is refused by every entry and left exactly as it was", async (shape) => {
    await turn(store.db, "a");
    // index.json is a coalesced cache: written now, so a flush of session a cannot land between two snapshots.
    await store.db.flushRegistry();
    const name = "taken";
    shape.make(join(store.root, name));
    const before = snapshot(store.root);
    const outsideBefore = snapshot(outside);
    const entries: Array<[string, () => Promise<unknown>]> = [
      ["sessionContext", () => turn(store.db, name)],
      ["openSession", () => store.db.openSession(name)],
      ["createSession", () => store.db.createSession({ id: name })],
      ["a second store instance", () => turn(new SessionDB({ root: store.root }), name)],
    ];
    if (!shape.lostMeta) entries.push(["deleteSession", () => store.db.deleteSession(name)]);
    for (const [entry, call] of entries) {
      const error = await refusal(call());
      expect([`not_a_session`, `unsafe_session_path`], `${entry}: ${error.message}`).toContain(error.code);
      expect(error.message, entry).toContain(join(store.root, name));
      expect(error.message, entry).toMatch(
        shape.link ? /is a symbolic link.*never reads or writes through/ : /exists but is not an OpenProgram session/,
      );
      expect(snapshot(store.root), `${entry} changed the store`).toEqual(before);
      expect(snapshot(outside), `${entry} wrote outside the root`).toEqual(outsideBefore);
    }
    expect(await store.db.loadNodes("a")).toHaveLength(1);
  });

  it("lets concurrent creators of one id agree on one session, leaving no half-made folder", async () => {
    const db = new SessionDB({ root: store.root });
    const handles = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        sessionContext({ db: index % 2 ? db : store.db, sessionId: "same", runtime: null }, async (session) => {
          await note({ text: `n${index}` });
          return session.created;
        }),
      ),
    );
    expect(handles.filter(Boolean)).toHaveLength(1);
    expect(await new SessionDB({ root: store.root }).loadNodes("same")).toHaveLength(12);
    await store.db.flushRegistry();
    expect(readdirSync(store.root).sort()).toEqual(["index.json", "same"]);
  });

  it("a create killed before its rename leaves a hidden folder that blocks nothing and the doctor removes", async () => {
    const leftover = join(store.root, ".creating-s-0123abcd");
    mkdirSync(join(leftover, "history"), { recursive: true });
    writeFileSync(join(leftover, "meta.json"), "{}");
    const old = new Date(Date.now() - 3_600_000);
    const { utimesSync } = await import("node:fs");
    utimesSync(leftover, old, old);
    expect(await turn(store.db, "s")).toBe("s");
    expect((await store.db.listSessions()).map((session) => session.id)).toEqual(["s"]);
    const report = await doctorSessions({ db: store.db });
    expect(report.findings.map((finding) => [finding.kind, finding.path])).toContainEqual(["temp_leftover", leftover]);
    await doctorSessions({ db: store.db, fix: true });
    expect(readdirSync(store.root).filter((name) => name.startsWith("."))).not.toContain(".creating-s-0123abcd");
  });
});

describe("symbolic links inside a session", () => {
  const folders = ["history", ".state", ".git", "context", "workdir"] as const;

  it.each(folders)("%s as a link to outside the root: writes are refused, nothing lands outside", async (folder) => {
    await turn(store.db, "s");
    const dir = join(store.root, "s");
    const target = join(outside, folder.replace(".", "dot-"));
    execFileSync("cp", ["-a", join(dir, folder), target]);
    rmSync(join(dir, folder), { recursive: true, force: true });
    symlinkSync(target, join(dir, folder));
    const outsideBefore = snapshot(outside);
    const error = await refusal(turn(new SessionDB({ root: store.root }), "s", "second"));
    expect(error.code).toBe("unsafe_session_path");
    expect(error.message).toContain(join(dir, folder));
    expect(error.message).toMatch(/sessions doctor s/);
    expect(snapshot(outside)).toEqual(outsideBefore);
  });

  it("meta.json as a link is refused; a node file that is a link is never read as a node", async () => {
    await turn(store.db, "s");
    const dir = join(store.root, "s");
    writeFileSync(join(outside, "meta.json"), readFileSync(join(dir, "meta.json")));
    rmSync(join(dir, "meta.json"));
    symlinkSync(join(outside, "meta.json"), join(dir, "meta.json"));
    const error = await refusal(turn(store.db, "s"));
    expect(error.code).toBe("unsafe_session_path");
    expect(error.message).toContain(join(dir, "meta.json"));
    rmSync(join(dir, "meta.json"));
    writeFileSync(join(dir, "meta.json"), readFileSync(join(outside, "meta.json")));

    writeFileSync(join(outside, "secret.json"), JSON.stringify({ id: "bbbbbbbbbbbb", role: "user", output: "secret" }));
    symlinkSync(join(outside, "secret.json"), join(dir, "history", "0005-u-bbbbbbbbbbbb.json"));
    const history = await new SessionDB({ root: store.root }).readHistory("s");
    expect(history.nodes.map((node) => node.output)).not.toContain("secret");
    expect(history.problems.map((problem) => problem.message)).toEqual([expect.stringMatching(/symbolic link/)]);
  });

  it("the sessions root itself may be a link (the user's choice of where the store lives)", async () => {
    const real = join(outside, "real-root");
    mkdirSync(real);
    const linked = join(store.home, "linked-root");
    symlinkSync(real, linked);
    const db = new SessionDB({ root: linked });
    await turn(db, "s");
    await turn(db, "s", "again");
    expect(await new SessionDB({ root: real }).loadNodes("s")).toHaveLength(2);
  });
});

describe("git is pinned to the session's own repository", () => {
  /** A checkout with uncommitted edits (a staged change, a modified file, an untracked one) around the sessions root. */
  function enclosingCheckout(): { dir: string; state: () => string[] } {
    const dir = join(outside, "checkout");
    mkdirSync(dir);
    git(dir, "init", "-q", "--initial-branch=main");
    git(dir, "config", "user.email", "me@example.com");
    git(dir, "config", "user.name", "Me");
    writeFileSync(join(dir, "tracked.txt"), "one\n");
    writeFileSync(join(dir, "staged.txt"), "one\n");
    git(dir, "add", ".");
    git(dir, "commit", "-q", "-m", "mine");
    writeFileSync(join(dir, "tracked.txt"), "uncommitted edit\n");
    writeFileSync(join(dir, "staged.txt"), "staged edit\n");
    git(dir, "add", "staged.txt");
    writeFileSync(join(dir, "untracked.txt"), "new\n");
    const state = (): string[] => [
      git(dir, "rev-parse", "HEAD"),
      git(dir, "log", "--all", "--format=%H %s"),
      // The sessions root is inside the checkout: its own files show as untracked there, and are not the user's.
      git(dir, "status", "--porcelain", "--untracked-files=all", "--", ".", ":(exclude).demo"),
      readFileSync(join(dir, ".git", "index"), "base64"),
    ];
    return { dir, state };
  }

  const damages: Array<{ name: string; damage: (gitDir: string) => void }> = [
    { name: "a garbled HEAD", damage: (gitDir) => writeFileSync(join(gitDir, "HEAD"), "garbage\n") },
    {
      name: "an empty .git/",
      damage: (gitDir) => {
        rmSync(gitDir, { recursive: true });
        mkdirSync(gitDir);
      },
    },
    {
      name: "a .git file pointing elsewhere",
      damage: (gitDir) => {
        rmSync(gitDir, { recursive: true });
        writeFileSync(gitDir, `gitdir: ${join(outside, "checkout", ".git")}\n`);
      },
    },
    { name: "missing objects", damage: (gitDir) => rmSync(join(gitDir, "objects"), { recursive: true }) },
  ];

  it.each(damages)(
    "$name fails the turn with git_failed, naming the session and the doctor; the enclosing checkout is untouched",
    async ({ damage }) => {
      const checkout = enclosingCheckout();
      const root = join(checkout.dir, ".demo", "home", "sessions");
      const db = new SessionDB({ root });
      await turn(db, "s");
      damage(join(root, "s", ".git"));
      const before = checkout.state();
      const error = await refusal(turn(new SessionDB({ root }), "s", "second"));
      expect(error).toBeInstanceOf(GitError);
      expect(error.code).toBe("git_failed");
      expect(error.message).toContain("session 's'");
      expect(error.message).toContain("openprogram sessions doctor s");
      expect(checkout.state()).toEqual(before);
    },
  );

  it("makes .git private: directories 0700, files at most 0600, whatever the umask", async () => {
    const previous = process.umask(0o022);
    try {
      await turn(store.db, "s");
      await turn(store.db, "s", "again");
    } finally {
      process.umask(previous);
    }
    const gitDir = join(store.root, "s", ".git");
    const loose: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const stat = statSync(path);
        if ((stat.mode & 0o077) !== 0) loose.push(`${relative(gitDir, path)} ${(stat.mode & 0o777).toString(8)}`);
        if (stat.isDirectory()) walk(path);
      }
    };
    walk(gitDir);
    expect(statSync(gitDir).mode & 0o777).toBe(0o700);
    expect(loose).toEqual([]);
  });
});

describe("node files that do not parse are never committed", () => {
  it("leaves a corrupted node and a garbage node file out of the turn's commit, and reports each", async () => {
    await turn(store.db, "s");
    const dir = join(store.root, "s");
    const [first] = readdirSync(join(dir, "history"));
    const committed = git(dir, "show", `HEAD:history/${first}`);
    writeFileSync(join(dir, "history", first as string), '{"id": "tru');
    writeFileSync(join(dir, "history", "0050-u-abcdefabcdef.json"), "[1, 2");
    writeFileSync(join(dir, "history", "0051-u-abcdefabcdee.json"), '["not", "a node"]');
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on("warning", onWarning);
    try {
      await turn(new SessionDB({ root: store.root }), "s", "second");
      // process.emitWarning delivers on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    expect(git(dir, "show", `HEAD:history/${first}`)).toBe(committed);
    expect(git(dir, "log", "--format=%s").split("\n")).toHaveLength(3);
    const tracked = git(dir, "ls-files", "history").split("\n");
    expect(tracked).toHaveLength(2);
    expect(tracked).not.toContain("history/0050-u-abcdefabcdef.json");
    const pending = git(dir, "status", "--porcelain", "--", "history").split("\n");
    expect(pending.map((line) => line.trim()).sort()).toEqual(
      [`M history/${first}`, "?? history/0050-u-abcdefabcdef.json", "?? history/0051-u-abcdefabcdee.json"].sort(),
    );
    for (const file of [first as string, "0050-u-abcdefabcdef.json", "0051-u-abcdefabcdee.json"]) {
      expect(warnings.some((warning) => warning.includes(file) && warning.includes("left out of the commit"))).toBe(
        true,
      );
    }
  });
});

describe("a corrupt meta.json", () => {
  const corruptions: Array<{ name: string; write: (path: string) => void; reason: RegExp }> = [
    { name: "an array", write: (path) => writeFileSync(path, '["x"]'), reason: /is not a JSON object/ },
    { name: "null", write: (path) => writeFileSync(path, "null"), reason: /is not a JSON object/ },
    { name: "a number", write: (path) => writeFileSync(path, "42"), reason: /is not a JSON object/ },
    { name: "a string", write: (path) => writeFileSync(path, '"meta"'), reason: /is not a JSON object/ },
    { name: "truncated JSON", write: (path) => writeFileSync(path, '{"id": "s", "head'), reason: /is not valid JSON/ },
    { name: "an empty file", write: (path) => writeFileSync(path, ""), reason: /is not valid JSON/ },
    {
      name: "a folder",
      write: (path) => {
        rmSync(path);
        mkdirSync(path);
      },
      reason: /cannot be read \(EISDIR\)/,
    },
  ];

  it.each(corruptions)(
    "$name: every entry says corrupt_meta naming the file; listed as damaged; doctor --fix heals it",
    async ({ write, reason }) => {
      await turn(store.db, "s");
      const meta = join(store.root, "s", "meta.json");
      write(meta);
      const damaged = snapshot(join(store.root, "s"));
      const db = new SessionDB({ root: store.root });
      for (const call of [() => turn(db, "s"), () => db.readMeta("s"), () => db.conversationBranch("s")]) {
        const error = await refusal(call());
        expect(error).toBeInstanceOf(CorruptMetaError);
        expect(error.code).toBe("corrupt_meta");
        expect(error.message).toContain(meta);
        expect(error.message).toMatch(reason);
        expect(error.message).toContain("openprogram sessions doctor s --fix");
      }
      // Refused, never rewritten: no {"0": "x", ...} and no new node.
      expect(snapshot(join(store.root, "s"))).toEqual(damaged);
      expect((await db.listSessions()).map((session) => [session.id, session.status])).toEqual([["s", "damaged"]]);
      rmSync(join(store.root, "index.json"));
      const rebuilt = new SessionDB({ root: store.root });
      expect((await rebuilt.listSessions()).map((session) => [session.id, session.status])).toEqual([["s", "damaged"]]);

      const report = await doctorSessions({ db: rebuilt });
      expect(report.findings.map((finding) => finding.kind)).toContain("corrupt_meta");
      expect(report.findings.find((finding) => finding.kind === "corrupt_meta")?.message).toMatch(reason);
      expect((await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true })).healthy).toBe(true);
      const healed = new SessionDB({ root: store.root });
      expect((await healed.getSession("s"))?.status).toBe("idle");
      await turn(healed, "s", "after the repair");
      expect((await healed.loadNodes("s")).map((node) => node.output)).toEqual(["hello", "after the repair"]);
    },
  );
});
