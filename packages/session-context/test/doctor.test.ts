import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, SessionDB, type DoctorReport } from "../src/entries/store.js";
import { createTempStore, PYTHON_SESSIONS_FIXTURE, type TempStore } from "../src/testing/index.js";
import { git } from "./helpers.js";
import { storeInternals } from "../src/store/internal.js";

let store: TempStore;
beforeEach(() => {
  store = createTempStore();
});
afterEach(() => store.cleanup());

const kinds = (report: DoctorReport): string[] =>
  report.findings.map((finding) => `${finding.sessionId ?? "-"}:${finding.kind}`).sort();

describe("sessions doctor", () => {
  it("runs clean on the Python fixtures", async () => {
    const fixture = createTempStore("openprogram-fixture-", { from: PYTHON_SESSIONS_FIXTURE });
    try {
      const report = await doctorSessions({ db: new SessionDB({ root: fixture.root }) });
      expect(report.findings).toEqual([]);
      expect(report.healthy).toBe(true);
      expect(report.sessionsChecked).toBe(2);
    } finally {
      fixture.cleanup();
    }
  });

  it("finds what crashes and hand edits leave behind, repairs it with fix, and then runs clean", async () => {
    const db = store.db;
    // A: a committed session whose node file gets corrupted, plus a duplicate seq and a dangling head.
    await db.createSession({ id: "a" });
    const first = await db.appendNode("a", { role: "user", output: "hello" }, { atHead: true, rootMarker: null });
    const second = await db.appendNode("a", { role: "llm", output: "hi", predecessor: first.id });
    await db.commitTurn("a", "turn 1");
    const historyA = join(store.root, "a", "history");
    const firstFile = readdirSync(historyA).find((name) => name.startsWith("0000-")) as string;
    writeFileSync(join(historyA, firstFile), '{"id": "tru');
    const duplicate = {
      ...JSON.parse(readFileSync(join(historyA, `0001-l-${second.id}.json`), "utf8")),
      id: "ddddddddd001",
      created_at: second.created_at + 1,
    } as Record<string, unknown>;
    writeFileSync(join(historyA, "0001-l-ddddddddd001.json"), JSON.stringify(duplicate));
    const meta = JSON.parse(readFileSync(join(store.root, "a", "meta.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(store.root, "a", "meta.json"), JSON.stringify({ ...meta, head_id: "000000000000" }));
    const temp = join(historyA, ".0002-c-abc.json.tmp-0123abcd");
    writeFileSync(temp, "{");
    utimesSync(temp, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));

    // B: a turn killed mid-way: a running node, status running, a lease of a dead process, never committed.
    await db.createSession({ id: "b" });
    await db.appendNode("b", { role: "code", name: "f", metadata: { status: "running" } }, { atHead: true });
    await db.setStatus("b", "running");
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    mkdirSync(join(store.root, "b", ".state", "turns"), { recursive: true });
    writeFileSync(join(store.root, "b", ".state", "turns", "turn_x.lease"), `${dead.stdout} ${hostname()} 0\n`);

    // C: meta.json lost.  D: missing from the registry.  And an orphan registry entry.
    await db.createSession({ id: "c", title: "Cee" });
    await db.appendNode("c", { role: "user", output: "x" }, { atHead: true, rootMarker: null });
    await db.commitTurn("c");
    rmSync(join(store.root, "c", "meta.json"));
    await db.createSession({ id: "d" });
    await storeInternals(db).updateRegistry((entries) => {
      delete entries.d;
      entries.ghost = { ...(entries.c as NonNullable<typeof entries.c>), id: "ghost" };
    });

    const fresh = (): SessionDB => new SessionDB({ root: store.root });
    const before = await doctorSessions({ db: fresh() });
    expect(kinds(before)).toEqual(
      [
        "a:corrupt_node",
        "a:dangling_head",
        "a:duplicate_seq",
        "a:temp_leftover",
        "a:uncommitted_tail",
        "b:stuck_status",
        "b:uncommitted_tail",
        "b:unfinished_node",
        "c:missing_meta",
        "c:uncommitted_tail",
        "d:registry_missing_entry",
        "ghost:registry_orphan_entry",
      ].sort(),
    );
    expect(before.healthy).toBe(false);
    expect(before.findings.every((finding) => !finding.fixed)).toBe(true);
    const corrupt = before.findings.find((finding) => finding.kind === "corrupt_node");
    expect(corrupt?.path).toBe(join(historyA, firstFile));

    const repaired = await doctorSessions({ db: fresh(), fix: true });
    expect(repaired.findings.filter((finding) => finding.severity === "error").every((finding) => finding.fixed)).toBe(
      true,
    );
    expect(repaired.healthy).toBe(true);
    for (const finding of repaired.findings) expect(finding.remedy).not.toBe("");

    const after = await doctorSessions({ db: fresh() });
    expect(after.findings.filter((finding) => finding.severity === "error")).toEqual([]);
    expect(kinds(after)).toEqual([]);

    const reopened = fresh();
    const nodesA = await reopened.loadNodes("a");
    expect(nodesA.map((node) => node.output)).toEqual(["hello", "hi", "hi"]);
    expect(new Set(nodesA.map((node) => node.seq)).size).toBe(3);
    // The newest conversation tip: the duplicate, moved to seq 2.
    expect((await reopened.readMeta("a")).head_id).toBe("ddddddddd001");
    expect(nodesA.find((node) => node.id === "ddddddddd001")?.seq).toBe(2);
    expect((await reopened.loadNodes("b"))[0]?.metadata.status).toBe("interrupted");
    expect((await reopened.getSession("b"))?.status).toBe("idle");
    expect((await reopened.readMeta("c")).title).toBe("Cee");
    expect((await reopened.listSessions()).map((session) => session.id).sort()).toEqual(["a", "b", "c", "d"]);
    expect(git(join(store.root, "b"), "status", "--porcelain")).toBe("");
  });

  it("does not repair a session whose turn is running", async () => {
    await store.db.createSession({ id: "busy" });
    await store.db.beginTurn("busy", "turn_live");
    await store.db.appendNode("busy", { role: "code", name: "f", metadata: { status: "running" } });
    const report = await doctorSessions({ db: store.db, fix: true });
    expect(report.findings.filter((finding) => finding.fixed)).toEqual([]);
    expect((await store.db.loadNodes("busy"))[0]?.metadata.status).toBe("running");
    await store.db.endTurn("busy", "turn_live", { status: "idle" });
  });

  it("reports nothing in a live turn with a reply streaming, and never repairs the head onto an unfinished reply", async () => {
    await store.db.createSession({ id: "chat" });
    await store.db.beginTurn("chat", "turn_live");
    const user = await store.db.appendNode("chat", { role: "user", output: "hi" }, { atHead: true, rootMarker: null });
    const running = { role: "llm" as const, output: null, metadata: { status: "running" } };
    await store.db.appendNode("chat", running, { atHead: true, rootMarker: null, moveHead: false });
    expect((await doctorSessions({ db: store.db, sessionId: "chat" })).findings).toEqual([]);
    await store.db.endTurn("chat", "turn_live", { status: "idle" });
    // The turn ended (the reply was recorded interrupted); with head_id lost, --fix points it at the user's message.
    const meta = JSON.parse(readFileSync(join(store.root, "chat", "meta.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(store.root, "chat", "meta.json"), JSON.stringify({ ...meta, head_id: null }));
    const report = await doctorSessions({ db: new SessionDB({ root: store.root }), sessionId: "chat", fix: true });
    expect(report.findings.map((finding) => finding.kind)).toContain("missing_head");
    expect((await new SessionDB({ root: store.root }).readMeta("chat")).head_id).toBe(user.id);
  });

  it("checks every session even when some repositories are broken, reporting each", async () => {
    const db = store.db;
    for (const id of ["a", "b", "c", "d", "e"]) {
      await db.createSession({ id });
      await db.appendNode(id, { role: "user", output: id }, { atHead: true, rootMarker: null });
      await db.commitTurn(id, "turn 1");
    }
    writeFileSync(join(store.root, "b", ".git", "HEAD"), "garbage\n");
    rmSync(join(store.root, "c", ".git"), { recursive: true });
    mkdirSync(join(store.root, "c", ".git"));
    rmSync(join(store.root, "d", ".git", "objects"), { recursive: true });
    const historyE = join(store.root, "e", "history");
    writeFileSync(join(historyE, readdirSync(historyE)[0] as string), "{");

    for (const fix of [false, true]) {
      const report = await doctorSessions({ db: new SessionDB({ root: store.root }), fix });
      expect(report.sessionsChecked).toBe(5);
      // Unrepaired, e's corrupt first node also leaves its head dangling and its history changed since the commit.
      expect(kinds(report)).toEqual([
        "b:git_damaged",
        "c:git_damaged",
        "d:git_damaged",
        "e:corrupt_node",
        ...(fix ? [] : ["e:dangling_head", "e:uncommitted_tail"]),
      ]);
      const damaged = report.findings.filter((finding) => finding.kind === "git_damaged");
      for (const finding of damaged) {
        expect(finding.fixed).toBe(false);
        expect(finding.message).toMatch(/cannot be read/);
        expect(finding.remedy).toContain(`mv ${finding.path} ${finding.path}.damaged`);
      }
      expect(report.findings.find((finding) => finding.kind === "corrupt_node")?.fixed).toBe(fix);
      expect(report.healthy).toBe(false);
    }
  });

  it("--fix restores a corrupt node from the newest commit where it still parses", async () => {
    const db = store.db;
    await db.createSession({ id: "s" });
    const node = await db.appendNode("s", { role: "user", output: "the original" }, { atHead: true, rootMarker: null });
    await db.commitTurn("s", "turn 1");
    const dir = join(store.root, "s");
    const file = `0000-u-${node.id}.json`;
    const good = readFileSync(join(dir, "history", file), "utf8");
    // Committed corrupt twice, as an older version (or the Python store, or a person) could have done.
    for (const text of ['{"id": "tru', "[]"]) {
      writeFileSync(join(dir, "history", file), text);
      git(dir, "commit", "-q", "-am", "corrupt");
    }
    const goodCommit = git(dir, "rev-list", "--max-count=1", "HEAD~2");
    const report = await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    const finding = report.findings.find((candidate) => candidate.kind === "corrupt_node");
    expect(finding?.fixed).toBe(true);
    expect(finding?.remedy).toBe(
      `Restored the last committed version that parses (commit ${goodCommit.slice(0, 12)}).`,
    );
    expect(readFileSync(join(dir, "history", file), "utf8")).toBe(good);
    expect((await new SessionDB({ root: store.root }).loadNodes("s")).map((loaded) => loaded.output)).toEqual([
      "the original",
    ]);
    expect(kinds(await doctorSessions({ db: new SessionDB({ root: store.root }) }))).toEqual([]);
  });

  it('refuses a meta.json that is not an object, keeps it aside, and never turns it into {"0": ...}', async () => {
    await store.db.createSession({ id: "s", title: "Kept title" });
    await store.db.appendNode("s", { role: "user", output: "x" }, { atHead: true, rootMarker: null });
    await store.db.commitTurn("s");
    const meta = join(store.root, "s", "meta.json");
    writeFileSync(meta, '["x"]');
    const report = await doctorSessions({ db: new SessionDB({ root: store.root }) });
    expect(kinds(report)).toContain("s:corrupt_meta");
    expect(report.findings.find((finding) => finding.kind === "corrupt_meta")?.message).toBe(
      "meta.json is not a JSON object (it holds an array).",
    );
    await doctorSessions({ db: new SessionDB({ root: store.root }), fix: true });
    const rebuilt = JSON.parse(readFileSync(meta, "utf8")) as Record<string, unknown>;
    expect(rebuilt).not.toHaveProperty("0");
    expect(rebuilt.title).toBe("Kept title");
    const kept = readdirSync(join(store.root, "s")).filter((name) => name.startsWith("meta.json.corrupt-"));
    expect(kept.map((name) => readFileSync(join(store.root, "s", name), "utf8"))).toEqual(['["x"]']);
  });

  it("never takes over a folder that is not a session, and reports a session reached through a link", async () => {
    await store.db.createSession({ id: "real" });
    mkdirSync(join(store.root, "mydir", "sub"), { recursive: true });
    writeFileSync(join(store.root, "mydir", "notes.txt"), "mine\n");
    const outside = mkdtempSync(join(tmpdir(), "openprogram-doctor-outside-"));
    try {
      mkdirSync(join(outside, "history"));
      writeFileSync(join(outside, "meta.json"), JSON.stringify({ id: "linked", head_id: null }));
      symlinkSync(outside, join(store.root, "linked"));
      const report = await doctorSessions({ db: store.db, fix: true });
      expect(kinds(report)).toEqual(["linked:unsafe_path", "mydir:not_a_session"]);
      expect(report.findings.find((finding) => finding.kind === "unsafe_path")?.fixed).toBe(false);
      expect(readdirSync(join(store.root, "mydir")).sort()).toEqual(["notes.txt", "sub"]);
      expect(readdirSync(outside).sort()).toEqual(["history", "meta.json"]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
