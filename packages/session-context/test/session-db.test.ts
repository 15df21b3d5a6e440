import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  InvalidSessionIdError,
  SessionBusyError,
  SessionExistsError,
  SessionNotFoundError,
  sessionContext,
  type SessionNode,
} from "../src/index.js";
import { SessionDB } from "../src/entries/store.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { childScript, git, runTsChild } from "./helpers.js";
import { storeInternals } from "../src/store/internal.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

describe("sessions", () => {
  it("creates a session in the Python layout with a lazily initialised repository", async () => {
    const record = await store.db.createSession({
      id: "s1",
      agentId: "main",
      source: "test",
      title: "First",
      extra: { project: "x" },
    });
    expect(record).toMatchObject({
      id: "s1",
      status: "idle",
      pinned: false,
      archived: false,
      unread: false,
      title: "First",
      source: "test",
    });
    const dir = join(store.root, "s1");
    expect(readdirSync(dir).sort()).toEqual([".state", "context", "history", "meta.json", "workdir"]);
    expect(existsSync(join(dir, "workdir", ".gitkeep"))).toBe(true);
    expect(existsSync(join(dir, ".git"))).toBe(false);
    const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as Record<string, unknown>;
    expect(Object.keys(meta)).toEqual([
      "id",
      "agent_id",
      "title",
      "source",
      "created_at",
      "updated_at",
      "project_id",
      "head_id",
      "project",
    ]);

    await store.db.appendNode("s1", { role: "user", output: "hi" }, { atHead: true, rootMarker: null });
    const sha = await store.db.commitTurn("s1", "turn 1");
    expect(git(dir, "log", "--format=%s", "--reverse").split("\n")).toEqual(["session init", "turn 1"]);
    expect(git(dir, "rev-parse", "HEAD")).toBe(sha);
    expect(git(dir, "config", "user.email")).toBe("openprogram@local");
    // Nothing changed since: no commit, and the caller is told so.
    expect(await store.db.commitTurn("s1", "turn 2")).toBeNull();
    const log = await store.db.gitLog("s1");
    expect(log.map((entry) => entry.message)).toEqual(["turn 1", "session init"]);
    expect(log[0]?.author).toBe("OpenProgram <openprogram@local>");
  });

  it("commits after a process was killed mid-commit, leaving git's index.lock behind", async () => {
    await store.db.createSession({ id: "killed" });
    await store.db.appendNode("killed", { role: "user", output: "a" });
    await store.db.commitTurn("killed", "turn 1");
    writeFileSync(join(store.root, "killed", ".git", "index.lock"), "");
    await store.db.appendNode("killed", { role: "user", output: "b" });
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    expect(await store.db.commitTurn("killed", "turn 2")).toMatch(/^[0-9a-f]{40}$/);
    expect(warnings.mock.calls.some(([message]) => String(message).includes("index.lock"))).toBe(true);
    warnings.mockRestore();
    expect(git(join(store.root, "killed"), "status", "--porcelain")).toBe("");
  });

  it("refuses a duplicate id, finds, lists, updates and deletes", async () => {
    await store.db.createSession({ id: "a", title: "A" });
    await expect(store.db.createSession({ id: "a" })).rejects.toBeInstanceOf(SessionExistsError);
    await store.db.createSession({ id: "b", title: "B" });
    await store.db.createSession({ id: "c", title: "C" });
    await store.db.updateSession("a", { title: "A2", pinned: true });
    await store.db.updateSession("b", { archived: true });
    expect((await store.db.getSession("a"))?.title).toBe("A2");
    expect((JSON.parse(readFileSync(join(store.root, "a", "meta.json"), "utf8")) as { title: string }).title).toBe(
      "A2",
    );
    expect((await store.db.listSessions()).map((s) => s.id).sort()).toEqual(["a", "c"]);
    expect((await store.db.listSessions({ includeArchived: true })).map((s) => s.id).sort()).toEqual(["a", "b", "c"]);
    // sorted by updated_at, newest first; limit/offset page through it
    await store.db.updateSession("c", { updated_at: 9_999_999_999 });
    const all = await store.db.listSessions({ includeArchived: true });
    expect(all[0]?.id).toBe("c");
    expect((await store.db.listSessions({ includeArchived: true, offset: 1, limit: 1 })).map((s) => s.id)).toEqual([
      all[1]?.id,
    ]);
    expect(await store.db.deleteSession("a")).toBe(true);
    expect(await store.db.getSession("a")).toBeNull();
    expect(existsSync(join(store.root, "a"))).toBe(false);
    expect(await store.db.deleteSession("a")).toBe(false);
    await expect(store.db.appendNode("a", { role: "user" })).rejects.toBeInstanceOf(SessionNotFoundError);
  });

  it("mints <prefix>_<10 hex> ids", async () => {
    const { id } = await store.db.createSession({ idPrefix: "research" });
    expect(id).toMatch(/^research_[0-9a-f]{10}$/);
  });
});

describe("nodes", () => {
  it("round-trips every field; created_at stays unix seconds", async () => {
    await store.db.createSession({ id: "rt" });
    const before = Date.now() / 1000;
    const drafts = [
      { role: "user" as const, output: 'héllo ✓ \u{1F600} \n\t "quoted"' },
      {
        role: "code" as const,
        name: "f",
        input: { nested: { list: [1, 2.5, null, true], text: "x" } },
        metadata: { status: "running", doc: "Line one\nLine two" },
      },
      {
        role: "llm" as const,
        name: "model",
        output: "answer",
        reads: ["a", "b"],
        metadata: { prompt_sha256: "0".repeat(64) },
      },
    ];
    const written: SessionNode[] = [];
    for (const draft of drafts) written.push(await store.db.appendNode("rt", draft));
    const fresh = new SessionDB({ root: store.root });
    const loaded = await fresh.loadNodes("rt");
    expect(loaded).toEqual(written);
    for (const node of loaded) {
      expect(node.created_at).toBeGreaterThanOrEqual(before - 1);
      expect(node.created_at).toBeLessThan(Date.now() / 1000 + 1);
      expect(node.id).toMatch(/^[0-9a-f]{12}$/);
    }
    // Non-ASCII is escaped as Python's json.dumps does.
    const file = readdirSync(join(store.root, "rt", "history")).find((name) => name.startsWith("0000-u-")) as string;
    expect(readFileSync(join(store.root, "rt", "history", file), "utf8")).toContain(
      "h\\u00e9llo \\u2713 \\ud83d\\ude00",
    );
  });

  it("updates a node in place: output replaced, metadata merged", async () => {
    await store.db.createSession({ id: "up" });
    const node = await store.db.appendNode("up", {
      role: "code",
      name: "f",
      metadata: { status: "running", doc: "d" },
    });
    const updated = await store.db.updateNode("up", node.id, { output: { ok: 1 }, metadata: { status: "completed" } });
    expect(updated.metadata).toEqual({ status: "completed", doc: "d" });
    const files = readdirSync(join(store.root, "up", "history"));
    expect(files).toEqual([`0000-c-${node.id}.json`]);
    expect((await new SessionDB({ root: store.root }).loadNodes("up"))[0]?.output).toEqual({ ok: 1 });
  });

  it("moves head_id only when a top-level conversation node extends the head", async () => {
    await store.db.createSession({ id: "h" });
    const first = await store.db.appendNode("h", { role: "code", name: "f" }, { atHead: true, rootMarker: "ROOT" });
    expect(first.predecessor).toBe("ROOT");
    const nested = await store.db.appendNode("h", { role: "llm", caller: first.id });
    expect((await store.db.readMeta("h")).head_id).toBe(first.id);
    expect(nested.predecessor).toBeNull();
    const second = await store.db.appendNode("h", { role: "user", output: "next", predecessor: first.id });
    expect((await store.db.readMeta("h")).head_id).toBe(second.id);
    expect((await store.db.conversationBranch("h")).map((node) => node.id)).toEqual([first.id, second.id]);
  });

  it("writes files 0600 and directories 0700, and leaves no temp files", async () => {
    await store.db.createSession({ id: "perm" });
    await store.db.appendNode("perm", { role: "user", output: "x" });
    await store.db.flushRegistry();
    const mode = (path: string): number => statSync(path).mode & 0o777;
    const dir = join(store.root, "perm");
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, "history"))).toBe(0o700);
    expect(mode(join(dir, "meta.json"))).toBe(0o600);
    expect(mode(join(store.root, "index.json"))).toBe(0o600);
    for (const file of readdirSync(join(dir, "history"))) expect(mode(join(dir, "history", file))).toBe(0o600);
    expect(readdirSync(join(dir, "history")).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("never shows a half-written node file to a concurrent reader", async () => {
    await store.db.createSession({ id: "atomic" });
    const history = join(store.root, "atomic", "history");
    // A separate process polls the directory and parses every node file it sees.
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `const fs=require("fs");let seen=0,bad=0;const end=Date.now()+30000;
         const pause=new Int32Array(new SharedArrayBuffer(4));
         while(Date.now()<end){Atomics.wait(pause,0,0,1);for(const f of fs.readdirSync(process.argv[1])){if(!/^\\d{4,}-.-.*\\.json$/.test(f))continue;
         try{JSON.parse(fs.readFileSync(process.argv[1]+"/"+f,"utf8"));seen++}catch(e){if(e.code!=="ENOENT")bad++}}
         if(fs.existsSync(process.argv[1]+"/../done"))break}
         process.stdout.write(JSON.stringify({seen,bad}))`,
        history,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let output = "";
    reader.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const big = "x".repeat(256 * 1024);
    for (let index = 0; index < 20; index++) {
      const node = await store.db.appendNode("atomic", {
        role: "code",
        name: "big",
        input: { big },
        metadata: { status: "running" },
      });
      await store.db.updateNode("atomic", node.id, { output: big, metadata: { status: "completed" } });
    }
    writeFileSync(join(store.root, "atomic", "done"), "");
    await new Promise((resolve) => reader.on("close", resolve));
    const result = JSON.parse(output) as { seen: number; bad: number };
    expect(result.bad).toBe(0);
    expect(result.seen).toBeGreaterThan(0);
  }, 120_000);
});

describe("bad input", () => {
  it.each([
    ["a/b", "'/'"],
    ["a\\b", "'\\'"],
    ["..", "'..'"],
    ["a..b", "'..'"],
    ["../escape", "'/'"],
    ["nul\0byte", "NUL"],
    ["", "empty"],
    ["x".repeat(129), "129 characters"],
    [".hidden", "starts with '.'"],
  ])("refuses session id %j before any path is built", async (sessionId, reason) => {
    const attempts = [
      () => store.db.createSession({ id: sessionId }),
      () => store.db.getSession(sessionId),
      () => store.db.appendNode(sessionId, { role: "user" }),
      () => store.db.deleteSession(sessionId),
    ];
    for (const attempt of attempts) {
      const error = await attempt().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidSessionIdError);
      expect((error as InvalidSessionIdError).code).toBe("invalid_session_id");
      expect((error as Error).message).toContain(reason);
    }
    expect(existsSync(store.root)).toBe(false);
    expect(existsSync(join(store.home, "escape"))).toBe(false);
  });

  it("rebuilds a corrupt or missing index.json from meta.json files, keeping the corrupt copy", async () => {
    await store.db.createSession({ id: "one", title: "One" });
    await store.db.createSession({ id: "two", title: "Two" });
    // The creates' queued registry write lands first: one still in flight would rename a good index.json over the
    // corrupt one written below (creates finish within its 20 ms delay now).
    await store.db.flushRegistry();
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    writeFileSync(join(store.root, "index.json"), "{ not json");
    const reopened = new SessionDB({ root: store.root });
    expect((await reopened.listSessions()).map((s) => [s.id, s.title]).sort()).toEqual([
      ["one", "One"],
      ["two", "Two"],
    ]);
    expect(readdirSync(store.root).some((name) => name.startsWith("index.json.corrupt-"))).toBe(true);
    expect(warnings.mock.calls.some(([message]) => String(message).includes("index.json"))).toBe(true);
    warnings.mockRestore();
    const { rmSync } = await import("node:fs");
    rmSync(join(store.root, "index.json"));
    expect((await new SessionDB({ root: store.root }).listSessions()).length).toBe(2);
    expect(existsSync(join(store.root, "index.json"))).toBe(true);
  });

  it("reports a corrupt node file by path and still loads the rest", async () => {
    await store.db.createSession({ id: "corrupt" });
    await store.db.appendNode("corrupt", { role: "user", output: "a" });
    const broken = await store.db.appendNode("corrupt", { role: "user", output: "b" });
    await store.db.appendNode("corrupt", { role: "user", output: "c" });
    const path = join(store.root, "corrupt", "history", `0001-u-${broken.id}.json`);
    writeFileSync(path, '{"id": "trunc');
    const warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const fresh = new SessionDB({ root: store.root });
    const history = await fresh.readHistory("corrupt");
    expect(history.nodes.map((node) => node.output)).toEqual(["a", "c"]);
    expect(history.problems.map((problem) => problem.path)).toEqual([path]);
    expect(history.problems[0]?.message).toContain("not valid JSON");
    expect(warnings.mock.calls.some(([message]) => String(message).includes(path))).toBe(true);
    warnings.mockRestore();
    // Its seq stays taken: the next node does not reuse 1.
    expect((await fresh.appendNode("corrupt", { role: "user", output: "d" })).seq).toBe(3);
  });

  /** Leaves `sessionId` as a killed process would: status running, a running node, the lease of a dead process. */
  async function crash(sessionId: string): Promise<SessionNode> {
    const running = await store.db.appendNode(sessionId, { role: "code", name: "f", metadata: { status: "running" } });
    const dead = spawn(process.execPath, ["-e", "0"]);
    await new Promise((resolve) => dead.on("close", resolve));
    mkdirSync(join(store.root, sessionId, ".state", "turns"), { recursive: true });
    writeFileSync(
      join(store.root, sessionId, ".state", "turns", `turn_${running.id}.lease`),
      `${dead.pid} ${hostname()} 0\n`,
    );
    await store.db.setStatus(sessionId, "running");
    return running;
  }

  /**
   * The registry file's identity (every write renames a new file into place), once the queued changes of the store
   * and of `readers` are written: queued entries reach the file shortly after, later still on a loaded machine.
   */
  async function registryVersion(...readers: SessionDB[]): Promise<string> {
    for (const db of [store.db, ...readers]) await db.flushRegistry();
    const stats = statSync(join(store.root, "index.json"));
    return `${stats.ino}:${stats.mtimeMs}`;
  }

  it("reads a session left running by a crashed process as recorded, and never rewrites the registry to read", async () => {
    await store.db.createSession({ id: "crashed" });
    await store.db.createSession({ id: "other" });
    const running = await crash("crashed");
    const before = await registryVersion();

    const reader = new SessionDB({ root: store.root });
    for (let read = 0; read < 20; read++) {
      expect((await reader.getSession("crashed"))?.status).toBe("running");
      expect((await reader.listSessions()).find((entry) => entry.id === "crashed")?.status).toBe("running");
    }
    expect((await reader.loadNodes("crashed")).find((node) => node.id === running.id)?.metadata.status).toBe("running");
    expect(await registryVersion(reader)).toBe(before);
  });

  /** Enters a session for a turn that writes nothing, as every entry point does. */
  async function enterForTurn(db: SessionDB, sessionId: string): Promise<void> {
    await sessionContext({ db, sessionId, createRuntimeIfNone: false, fromEnvironment: false }, () => undefined);
  }

  it("a session this store made for a turn is not recovered at its next turn, unless a dead turn's lease appears", async () => {
    await enterForTurn(store.db, "made");
    const recover = vi.spyOn(store.db, "recover");
    // No turn but this store's own has run in it: nothing to recover, and no lock section taken to find that out.
    await enterForTurn(store.db, "made");
    expect(recover).not.toHaveBeenCalled();
    // A turn of another process dies in it: the next turn here recovers it first.
    const running = await crash("made");
    await enterForTurn(store.db, "made");
    expect(recover).toHaveBeenCalledTimes(1);
    expect((await store.db.loadNodes("made")).find((node) => node.id === running.id)?.metadata.status).toBe(
      "interrupted",
    );
    recover.mockRestore();
  });

  it("opening a session never recovers: recovery is an explicit step", async () => {
    await store.db.createSession({ id: "crashed" });
    await crash("crashed");
    const before = await registryVersion();

    const reopened = new SessionDB({ root: store.root });
    expect(await reopened.openSession("crashed", { create: false })).toBe(false);
    expect((await reopened.getSession("crashed"))?.status).toBe("running");
    expect(await registryVersion(reopened)).toBe(before);
    expect(await reopened.recover("crashed")).toBe(true);
    expect((await reopened.getSession("crashed"))?.status).toBe("idle");
    expect(await reopened.recover("crashed")).toBe(false);
    // create: false opens only what exists, and makes nothing.
    await expect(reopened.openSession("absent", { create: false })).rejects.toBeInstanceOf(SessionNotFoundError);
    expect(existsSync(join(store.root, "absent"))).toBe(false);
    expect(await reopened.getSession("absent")).toBeNull();
  });

  it("recovers a crashed turn when the session is entered for a turn: nodes interrupted, status idle", async () => {
    await store.db.createSession({ id: "crashed" });
    const running = await crash("crashed");

    const reopened = new SessionDB({ root: store.root });
    await enterForTurn(reopened, "crashed");
    expect((await reopened.getSession("crashed"))?.status).toBe("idle");
    const node = (await reopened.loadNodes("crashed")).find((candidate) => candidate.id === running.id);
    expect(node?.metadata.status).toBe("interrupted");
    expect(readdirSync(join(store.root, "crashed", ".state", "turns"))).toEqual([]);
  });

  it("checks a session once per instance, and again when a lease is seen to expire", async () => {
    await store.db.createSession({ id: "twice" });
    const opener = new SessionDB({ root: store.root });
    await enterForTurn(opener, "twice");
    // Status says running, but no lease file: the first check of this instance already ran, so no second look.
    await store.db.setStatus("twice", "running");
    const before = await registryVersion();
    await enterForTurn(opener, "twice");
    expect(await registryVersion(opener)).toBe(before);
    expect((await opener.getSession("twice"))?.status).toBe("running");
    // A turn of another process dies, leaving its lease: the next entry recovers it.
    await crash("twice");
    await enterForTurn(opener, "twice");
    expect((await opener.getSession("twice"))?.status).toBe("idle");
  });

  it("keeps a session whose turn process is alive running", async () => {
    await store.db.createSession({ id: "alive" });
    await store.db.beginTurn("alive", "turn_live");
    expect((await new SessionDB({ root: store.root }).getSession("alive"))?.status).toBe("running");
    await store.db.endTurn("alive", "turn_live", { status: "idle" });
    expect((await store.db.getSession("alive"))?.status).toBe("idle");
  });
});

describe("deletion and turns exclude each other", () => {
  it("refuses to delete a session while a turn holds its lease, and deletes it once the turn ended", async () => {
    await store.db.createSession({ id: "held" });
    await store.db.beginTurn("held", "turn_held");
    const refused = await new SessionDB({ root: store.root }).deleteSession("held").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SessionBusyError);
    expect((refused as SessionBusyError).code).toBe("session_busy");
    expect((refused as Error).message).toContain("running a turn");
    expect(storeInternals(store.db).exists("held")).toBe(true);
    await store.db.endTurn("held", "turn_held", { status: "idle" });
    expect(await store.db.deleteSession("held")).toBe(true);
    // Nothing is left: no session directory, no directory moved aside for deletion.
    expect(readdirSync(store.root).filter((name) => name !== "index.json" && !name.startsWith(".index"))).toEqual([]);
  });

  it("refuses a turn on a session deleted meanwhile; late status writes re-create nothing", async () => {
    await store.db.createSession({ id: "gone" });
    await store.db.appendNode("gone", { role: "user", output: "hello" });
    expect(await new SessionDB({ root: store.root }).deleteSession("gone")).toBe(true);
    for (const write of [
      () => store.db.beginTurn("gone", "turn_late"),
      () => store.db.setStatus("gone", "running"),
      () => store.db.endTurn("gone", "turn_late", { status: "idle" }),
      () => store.db.appendNode("gone", { role: "user", output: "late" }),
    ]) {
      const error = await write().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(SessionNotFoundError);
    }
    expect(await store.db.getSession("gone")).toBeNull();
    expect(Object.keys(JSON.parse(readFileSync(join(store.root, "index.json"), "utf8")) as object)).toEqual([]);
    expect(readdirSync(store.root).filter((name) => !name.startsWith(".") && name !== "index.json")).toEqual([]);
  });

  it("races beginTurn against deleteSession 50 times: one wins, and no ghost entry or directory is left", async () => {
    const deleter = new SessionDB({ root: store.root });
    const outcomes = { turn: 0, deleted: 0 };
    for (let round = 0; round < 50; round++) {
      const id = `race${round}`;
      await store.db.createSession({ id });
      const [began, deleted] = await Promise.allSettled([
        store.db.beginTurn(id, `turn_${round}`),
        deleter.deleteSession(id),
      ]);
      if (began.status === "fulfilled") {
        // The turn holds the session: deletion was refused, and the turn ends normally.
        expect(deleted.status === "rejected" && (deleted.reason as SessionBusyError).code).toBe("session_busy");
        await store.db.endTurn(id, `turn_${round}`, { status: "idle" });
        expect((await store.db.getSession(id))?.status).toBe("idle");
        outcomes.turn++;
      } else {
        expect((began.reason as SessionNotFoundError).code).toBe("session_not_found");
        expect(deleted).toEqual({ status: "fulfilled", value: true });
        await expect(store.db.setStatus(id, "idle")).rejects.toThrow(SessionNotFoundError);
        outcomes.deleted++;
      }
    }
    await store.db.flushRegistry();
    const registry = JSON.parse(readFileSync(join(store.root, "index.json"), "utf8")) as Record<
      string,
      { status: string }
    >;
    for (const [id, entry] of Object.entries(registry)) {
      expect(existsSync(join(store.root, id, "meta.json")), `${id} is listed and on disk`).toBe(true);
      expect(entry.status).toBe("idle");
    }
    const directories = readdirSync(store.root).filter((name) => !name.startsWith(".") && name !== "index.json");
    expect(directories.sort()).toEqual(Object.keys(registry).sort());
    expect(outcomes.turn + outcomes.deleted).toBe(50);
  });
});

describe("concurrency", () => {
  it("gives 50 concurrent appends from one process 50 consecutive seqs", async () => {
    await store.db.createSession({ id: "c50" });
    const nodes = await Promise.all(
      Array.from({ length: 50 }, (_, index) => store.db.appendNode("c50", { role: "code", name: `n${index}` })),
    );
    expect(nodes.map((node) => node.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, index) => index),
    );
    expect(readdirSync(join(store.root, "c50", "history")).length).toBe(50);
  });

  it("loses and duplicates nothing when two processes append to one session at once", async () => {
    await store.db.createSession({ id: "twoproc" });
    const script = childScript("append-nodes.ts");
    const [a, b] = await Promise.all([
      runTsChild(script, [store.root, "twoproc", "150", "a"]),
      runTsChild(script, [store.root, "twoproc", "150", "b"]),
      (async () => {
        for (let index = 0; index < 50; index++)
          await store.db.appendNode("twoproc", { role: "code", name: `parent_${index}` });
      })(),
    ]);
    expect(a?.stderr).toBe("");
    expect(b?.stderr).toBe("");
    expect([a?.code, b?.code]).toEqual([0, 0]);
    // Our cache sees the children's nodes without reopening.
    const nodes = await store.db.loadNodes("twoproc");
    expect(nodes.length).toBe(350);
    expect(nodes.map((node) => node.seq)).toEqual(Array.from({ length: 350 }, (_, index) => index));
    expect(new Set(nodes.map((node) => node.name)).size).toBe(350);
    const files = readdirSync(join(store.root, "twoproc", "history"));
    expect(new Set(files.map((name) => name.slice(0, 4))).size).toBe(350);
  });
});
