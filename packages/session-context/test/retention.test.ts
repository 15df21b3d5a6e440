// Archiving and retention as Python OpenProgram does them (PYTHON-COMPAT.md,
// Archive and cleanup): archived_shared from Python's store, archive/unarchive,
// prune's three rules with --dry-run, the sessions it never touches, and git gc.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { chat, sessionContext, type SessionDB } from "../src/index.js";
import { archiveSession, gcSessions, pruneSessions, unarchiveSession } from "../src/entries/store.js";
import { createTempStore, scriptedRuntime, type TempStore } from "../src/testing/index.js";
import { storeInternals } from "../src/store/internal.js";
import { git } from "./helpers.js";

const V2_FIXTURE = fileURLToPath(new URL("./fixtures/python-openprogram-sessions-v2.tar.gz", import.meta.url));
const DAY = 86_400;

let store: TempStore | undefined;
afterEach(() => {
  store?.cleanup();
  store = undefined;
});

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

describe("archived_shared, written by Python's store", () => {
  it("is hidden from the list unless asked, and reads, renders and continues like any session", async () => {
    store = createTempStore("openprogram-retention-", { from: V2_FIXTURE });
    const db = store.db;
    expect((await db.listSessions()).map((record) => record.id)).not.toContain("archived_shared");
    expect((await db.listSessions({ includeArchived: true })).map((record) => record.id)).toContain("archived_shared");
    const { runtime, provider } = scriptedRuntime(["hello again"]);
    await sessionContext({ db, runtime, sessionId: "archived_shared" }, () => chat("still there?"));
    expect(provider.requests[0]?.request.messages).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "hi" },
      { role: "user", content: "still there?" },
    ]);
    // Continuing does not unarchive it (Python's append leaves the flag alone).
    expect((await db.getSession("archived_shared"))?.archived).toBe(true);
  });

  it("unarchives and archives again exactly as Python's set_archived: the flag in index.json and meta.json, updated_at kept", async () => {
    store = createTempStore("openprogram-retention-", { from: V2_FIXTURE });
    const { db, root } = store;
    const before = (await db.getSession("archived_shared"))?.updated_at;
    await unarchiveSession("archived_shared", { db });
    expect(readJson(join(root, "index.json")).archived_shared).toMatchObject({ archived: false, updated_at: before });
    expect(readJson(join(root, "archived_shared", "meta.json")).archived).toBe(false);
    expect((await db.listSessions()).map((record) => record.id)).toContain("archived_shared");
    await archiveSession("archived_shared", { db });
    expect(readJson(join(root, "index.json")).archived_shared).toMatchObject({ archived: true, updated_at: before });
    expect(readJson(join(root, "archived_shared", "meta.json"))).toEqual({
      id: "archived_shared",
      agent_id: "main",
      title: "Old notes",
      source: "cli",
      created_at: 1796094266.214783,
      updated_at: 1796094266.2824378,
      project_id: "default",
      archived: true,
      head_id: "xasha",
    });
    expect(git(join(root, "archived_shared"), "status", "--porcelain")).toBe("");
  });

  it("keeps the flag when the registry is rebuilt from meta.json", async () => {
    store = createTempStore("openprogram-retention-", { from: V2_FIXTURE });
    rmSync(join(store.root, "index.json"));
    expect((await store.db.getSession("archived_shared"))?.archived).toBe(true);
  });
});

/** A store with sessions whose registry times are set by the test. */
async function seeded(
  db: SessionDB,
  specs: Array<{ id: string; ageDays: number; archived?: boolean; empty?: boolean; status?: string }>,
  now: number,
): Promise<void> {
  const { runtime } = scriptedRuntime(specs.filter((spec) => !spec.empty).map(() => "ok"));
  for (const spec of specs) {
    if (spec.empty) await db.createSession({ id: spec.id });
    else await sessionContext({ db, runtime, sessionId: spec.id }, () => chat("hi"));
  }
  await storeInternals(db).updateRegistry((entries) => {
    for (const spec of specs) {
      const time = now - spec.ageDays * DAY;
      entries[spec.id] = {
        ...entries[spec.id]!,
        created_at: time,
        updated_at: time,
        archived: spec.archived === true,
        status: spec.status ?? "idle",
      };
    }
  });
}

describe("pruneSessions applies Python's startup cleanup on demand", () => {
  it("names empty shells over an hour old, archives past 90 days and the oldest archived past capacity; --dry-run deletes nothing", async () => {
    store = createTempStore("openprogram-prune-");
    const db = store.db;
    const now = Date.now() / 1000;
    await seeded(
      db,
      [
        { id: "empty_old", ageDays: 1, empty: true },
        { id: "empty_new", ageDays: 0.01, empty: true },
        { id: "archived_expired", ageDays: 91, archived: true },
        { id: "archived_recent", ageDays: 89, archived: true },
        { id: "old_active", ageDays: 400 },
        { id: "archived_a", ageDays: 10, archived: true },
        { id: "archived_b", ageDays: 20, archived: true },
      ],
      now,
    );
    // Capacity 4: after the two rule deletions 5 remain, so the one oldest archived (archived_recent) goes too.
    const rules = { capacity: 4 };
    const dry = await pruneSessions({ db, dryRun: true, now, rules });
    expect(dry.removed.map((entry) => [entry.sessionId, entry.reason])).toEqual([
      ["archived_expired", "archive_expired"],
      ["empty_old", "empty"],
      ["archived_recent", "over_capacity"],
    ]);
    expect(dry).toMatchObject({ dryRun: true, checked: 7, kept: [] });
    expect(await db.listSessions({ includeArchived: true })).toHaveLength(7);
    const done = await pruneSessions({ db, now, rules });
    expect(done.removed.map((entry) => entry.sessionId)).toEqual(dry.removed.map((entry) => entry.sessionId));
    expect((await db.listSessions({ includeArchived: true })).map((record) => record.id).sort()).toEqual([
      "archived_a",
      "archived_b",
      "empty_new",
      "old_active",
    ]);
    expect((await pruneSessions({ db, now, rules })).removed).toEqual([]);
  });

  it("never touches a session running a turn (any process's lease) or waiting for an answer", async () => {
    store = createTempStore("openprogram-prune-");
    const db = store.db;
    const now = Date.now() / 1000;
    await seeded(
      db,
      [
        { id: "waiting", ageDays: 100, archived: true, status: "needs_input" },
        { id: "running", ageDays: 100, archived: true },
      ],
      now,
    );
    // A live turn lease, as a turn in another process holds it (this process's pid is alive).
    const turns = storeInternals(db).paths("running").turns;
    mkdirSync(turns, { recursive: true });
    writeFileSync(join(turns, "turn_0123456789.lease"), `${process.pid} ${(await import("node:os")).hostname()} 0\n`);
    const report = await pruneSessions({ db, now });
    expect(report.removed).toEqual([]);
    expect(report.kept.map((entry) => [entry.sessionId, entry.keptBecause]).sort()).toEqual([
      ["running", "running"],
      ["waiting", "waiting"],
    ]);
    expect(await db.listSessions({ includeArchived: true })).toHaveLength(2);
  });
});

describe("gcSessions", () => {
  it("packs each repository and reports the space saved", async () => {
    store = createTempStore("openprogram-gc-");
    const db = store.db;
    const { runtime } = scriptedRuntime(Array.from({ length: 12 }, (_, index) => `reply ${index}`));
    const sessionId = await sessionContext({ db, runtime }, async (session) => {
      await chat("first");
      return session.sessionId;
    });
    for (let turn = 0; turn < 10; turn++) await sessionContext({ db, runtime, sessionId }, () => chat(`turn ${turn}`));
    const report = await gcSessions({ db, sessionId });
    expect(report.sessions).toHaveLength(1);
    const [entry] = report.sessions;
    expect(entry?.skipped).toBeUndefined();
    expect(entry!.bytesAfter).toBeLessThan(entry!.bytesBefore);
    expect(report.bytesSaved).toBe(entry!.bytesBefore - entry!.bytesAfter);
    // Still a whole repository: "session init" and every turn's commit are there.
    expect(git(join(store.root, sessionId), "rev-list", "--count", "HEAD")).toBe("12");
    expect(git(join(store.root, sessionId), "fsck", "--no-progress")).toBe("");
  });

  it("never grows the store: a repository already packed is left alone, and a second gc adds nothing", async () => {
    store = createTempStore("openprogram-gc-");
    const db = store.db;
    const { runtime } = scriptedRuntime(["one", "two", "three"]);
    const small = await sessionContext({ db, runtime }, async (session) => {
      await chat("first");
      return session.sessionId;
    });
    const two = await sessionContext({ db, runtime }, async (session) => {
      await chat("first");
      return session.sessionId;
    });
    await sessionContext({ db, runtime, sessionId: two }, () => chat("second"));
    const first = await gcSessions({ db });
    const byId = new Map(first.sessions.map((entry) => [entry.sessionId, entry]));
    // One turn after "session init": two packs, which gc merges into one without adding a commit-graph or info files.
    expect(byId.get(small)?.skipped).toBeUndefined();
    for (const entry of first.sessions) expect(entry.bytesAfter).toBeLessThanOrEqual(entry.bytesBefore);
    expect(first.bytesSaved).toBeGreaterThanOrEqual(0);
    const second = await gcSessions({ db });
    expect(second.sessions.map((entry) => entry.skipped)).toEqual(["already_packed", "already_packed"]);
    expect(second.bytesSaved).toBe(0);
    for (const id of [small, two]) {
      expect(git(join(store.root, id), "fsck", "--no-progress")).toBe("");
      expect(existsSync(join(store.root, id, ".git", "objects", "info", "commit-graph"))).toBe(false);
    }
  });
});
