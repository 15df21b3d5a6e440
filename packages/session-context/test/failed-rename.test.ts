// A node write whose file cannot be renamed into place fails, and what it logged is taken back (VOID_MARKER): the
// log's append and the renames run at once (history.ts writeLogged), so the text may be logged before the rename
// fails, and no later recovery may put a failed write's file in place. The rename fails through node:fs itself
// (EIO for one node's file); every other call reaches the real file system.
import type * as NodeFs from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { StoreWriteError } from "../src/errors.js";
import { storeInternals } from "../src/store/internal.js";
import { readWal } from "../src/store/session-wal.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    rename: (from: string, to: string, callback: (error: NodeJS.ErrnoException | null) => void): void => {
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
