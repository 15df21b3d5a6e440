// A node write's append to the log and its renames run at once (history.ts writeLogged), so the log may name a file
// before it is in place: another store's first read meanwhile must not put it there from the log, and a write whose
// file cannot be renamed fails with what it logged taken back (VOID_MARKER), so no later recovery puts it in place.
// The rename is held back or fails through node:fs itself, for one node's file; every other call reaches the real
// file system.
import type * as NodeFs from "node:fs";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { StoreWriteError } from "../src/errors.js";
import { storeInternals } from "../src/store/internal.js";
import { readWal } from "../src/store/session-wal.js";
import { createTempStore, waitFor, type TempStore } from "../src/testing/index.js";

const slow = vi.hoisted(() => ({ release: null as (() => void) | null, started: null as (() => void) | null }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    rename: (from: string, to: string, callback: (error: NodeJS.ErrnoException | null) => void): void => {
      if (String(to).endsWith("-slow.json")) {
        slow.release = () => actual.rename(from, to, callback);
        slow.started?.();
        return;
      }
      if (String(to).endsWith("-unplaceable.json")) {
        const error: NodeJS.ErrnoException = new Error(`EIO: i/o error, rename '${from}' -> '${to}'`);
        error.code = "EIO";
        setImmediate(() => callback(error));
        return;
      }
      actual.rename(from, to, callback);
    },
  };
});

let store: TempStore;
let db: SessionDB;
beforeEach(async () => {
  store = createTempStore("openprogram-failed-rename-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "renames" });
});
afterEach(() => store.cleanup());

describe("a node write whose rename is still running", () => {
  it("is not put in place from the log by another store's first read meanwhile", async () => {
    const kept = await db.appendNode("s", { role: "user", output: "kept" }, { atHead: true });
    const renaming = new Promise<void>((resolve) => (slow.started = resolve));
    const writing = db.appendNode("s", { id: "slow", role: "code", name: "t", caller: kept.id });
    await renaming;
    // Logged (the append runs beside the rename), not in place.
    const wal = join(store.root, "s", ".state", "wal");
    await waitFor(() => readWal(wal).some((record) => record.rel.endsWith("-slow.json")), "the slow node logged");
    const history = join(store.root, "s", "history");
    expect(readdirSync(history).some((name) => name.endsWith("-slow.json"))).toBe(false);
    // This process holds the session's lease, so a restore could run here: it leaves the write to its writer.
    const seen = (await new SessionDB({ root: store.root }).loadNodes("s")).map((node) => node.id);
    expect(seen).toEqual([kept.id]);
    expect(readdirSync(history).some((name) => name.endsWith("-slow.json"))).toBe(false);
    slow.release?.();
    await writing;
    expect((await new SessionDB({ root: store.root }).loadNodes("s")).map((node) => node.id)).toEqual([
      kept.id,
      "slow",
    ]);
  });
});

describe("a held file that cannot be put in place", () => {
  it("is let go (the session's lock with it) and put in place from the log by the next read", async () => {
    const kept = await db.appendNode("s", { role: "user", output: "kept" }, { atHead: true });
    await db.appendNode(
      "s",
      { id: "unplaceable", role: "code", name: "t", caller: kept.id, metadata: { status: "running" } },
      { holdFile: true },
    );
    // Its placement (10 ms on) fails; the lease, no longer pinned, is let go at its next idle look.
    const lock = join(store.root, "s", ".state", "lock");
    await waitFor(() => !existsSync(lock), "the session's lock let go", 20_000);
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(nodes.map((node) => [node.id, node.metadata.status ?? null])).toEqual([
      [kept.id, null],
      ["unplaceable", "running"],
    ]);
  });
});

describe("a node write whose file cannot be put in place", () => {
  it("fails, and no reader puts the text it logged in place afterwards", async () => {
    const kept = await db.appendNode("s", { role: "user", output: "kept" }, { atHead: true });
    await expect(
      db.appendNode("s", { id: "unplaceable", role: "code", name: "t", caller: kept.id }),
    ).rejects.toBeInstanceOf(StoreWriteError);
    // The text was logged (the append and the rename ran at once) and taken back.
    const wal = join(store.root, "s", ".state", "wal");
    expect(readWal(wal).some((record) => record.rel.endsWith("-unplaceable.json"))).toBe(false);
    // Another store's first read restores what the log holds beyond the files: not this.
    const nodes = await new SessionDB({ root: store.root }).loadNodes("s");
    expect(nodes.map((node) => node.id)).toEqual([kept.id]);
    expect((await db.loadNodes("s")).map((node) => node.id)).toEqual([kept.id]);
    // The session goes on: the next write lands, and the doctor finds nothing to put back.
    await db.appendNode("s", { role: "llm", output: "after" }, { atHead: true });
    const report = await doctorSessions({ db, sessionId: "s" });
    expect(report.findings.filter((finding) => finding.kind === "wal_restore")).toEqual([]);
  });

  it("takes back the files the failed write held as well (a tool's running node beside its reply)", async () => {
    const kept = await db.appendNode("s", { role: "user", output: "kept" }, { atHead: true });
    await expect(
      storeInternals(db).writeNodes("s", [
        { op: "append", draft: { id: "unplaceable", role: "llm", caller: kept.id, output: "reply" } },
        {
          op: "append",
          draft: { id: "held_tool", role: "code", name: "t", caller: "unplaceable", metadata: { status: "running" } },
          options: { holdFile: true },
        },
      ]),
    ).rejects.toBeInstanceOf(StoreWriteError);
    const wal = join(store.root, "s", ".state", "wal");
    expect(readWal(wal).filter((record) => /-(unplaceable|held_tool)\.json$/.test(record.rel))).toEqual([]);
    expect((await new SessionDB({ root: store.root }).loadNodes("s")).map((node) => node.id)).toEqual([kept.id]);
    expect((await db.loadNodes("s")).map((node) => node.id)).toEqual([kept.id]);
  });
});
