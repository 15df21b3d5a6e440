// The session's write-ahead log (issue 38): the records it keeps, what a torn
// tail does to them, and which files recovery puts back after a power cut
// (missing, torn, an older logged text) and which it leaves (a text someone
// else wrote, a link), against a real store on disk.
import {
  appendFileSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionDB } from "../src/entries/store.js";
import { SessionPaths } from "../src/store/layout.js";
import { appendWal, encodeWalRecords, readWal, VOID_MARKER, voidRecord } from "../src/store/session-wal.js";
import { checkpointWal, planWalRestore, restoreFromWal } from "../src/store/wal-recovery.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

let store: TempStore;
let db: SessionDB;
let paths: SessionPaths;
beforeEach(async () => {
  store = createTempStore("openprogram-wal-");
  db = new SessionDB({ root: store.root });
  await db.createSession({ id: "s", title: "wal" });
  paths = new SessionPaths(store.root, "s");
});
afterEach(() => store.cleanup());

const nodeFiles = (): string[] => readdirSync(paths.history).filter((name) => name.endsWith(".json"));

describe("the log's records", () => {
  it("reads back what was appended, in order, multi-line texts and non-ASCII included", async () => {
    const records = [
      { rel: "history/0000-u-a.json", data: '{\n  "id": "a",\n  "output": "héllo"\n}', replaces: null },
      { rel: "meta.json", data: "{}", replaces: 0xdeadbeef },
    ];
    await appendWal(paths.wal, records, true);
    expect(statSync(paths.wal).size).toBe(encodeWalRecords(records).length);
    await appendWal(paths.wal, [{ rel: "meta.json", data: '{"head_id": "a"}', replaces: 7 }], false);
    expect(readWal(paths.wal)).toEqual([...records, { rel: "meta.json", data: '{"head_id": "a"}', replaces: 7 }]);
  });

  it("ends at a record cut short or failing its CRC (the write a power cut tore), keeping the ones before", async () => {
    await appendWal(paths.wal, [{ rel: "meta.json", data: '{"a": 1}', replaces: null }], true);
    const whole = readFileSync(paths.wal).length;
    await appendWal(
      paths.wal,
      [{ rel: "meta.json", data: '{"a": 2, "long": "xxxxxxxxxxxxxxxx"}', replaces: null }],
      false,
    );
    truncateSync(paths.wal, whole + 20);
    expect(readWal(paths.wal)).toEqual([{ rel: "meta.json", data: '{"a": 1}', replaces: null }]);

    truncateSync(paths.wal, whole);
    const flipped = encodeWalRecords([{ rel: "meta.json", data: '{"a": 3}', replaces: null }])
      .toString()
      .replace('"a": 3', '"a": 4');
    appendFileSync(paths.wal, flipped);
    expect(readWal(paths.wal)).toEqual([{ rel: "meta.json", data: '{"a": 1}', replaces: null }]);
  });

  it("leaves out what a void marker takes back: the last record of each file it names, and the marker", async () => {
    const first = { rel: "history/0000-u-a.json", data: '{"id": "a", "v": 1}', replaces: null };
    const second = { rel: "history/0000-u-a.json", data: '{"id": "a", "v": 2}', replaces: 1 };
    const other = { rel: "meta.json", data: "{}", replaces: null };
    await appendWal(paths.wal, [first, other, second], true);
    await appendWal(paths.wal, [voidRecord(["history/0000-u-a.json", "history/0009-u-never.json"])], true);
    expect(readWal(paths.wal)).toEqual([first, other]);
    // A marker it cannot read takes nothing back.
    await appendWal(paths.wal, [{ rel: VOID_MARKER, data: "not json", replaces: null }], true);
    expect(readWal(paths.wal)).toEqual([first, other]);
  });

  it("is empty when there is none, and when a symbolic link stands in its place (never followed)", () => {
    expect(readWal(paths.wal)).toEqual([]);
    writeFileSync(join(store.root, "elsewhere"), encodeWalRecords([{ rel: "meta.json", data: "{}", replaces: null }]));
    symlinkSync(join(store.root, "elsewhere"), paths.wal);
    expect(readWal(paths.wal)).toEqual([]);
  });

  it("a link planted as the log is neither written through nor read: the turn is made durable file by file", async () => {
    const outside = join(store.root, "outside.txt");
    writeFileSync(outside, "untouched");
    symlinkSync(outside, paths.wal);
    await db.beginTurn("s", "t1");
    const node = await db.appendNode("s", { role: "user", name: "", output: "hi" }, { atHead: true });
    expect(await db.endTurn("s", "t1", { status: "idle" })).toMatch(/^[0-9a-f]{40}$/);
    expect(readFileSync(outside, "utf8")).toBe("untouched");
    expect((await new SessionDB({ root: store.root }).getNode("s", node.id))?.output).toBe("hi");
  });
});

describe("writes through the log", () => {
  it("every node write and meta.json beside it is logged whole, readable at once by another process", async () => {
    await db.beginTurn("s", "t1");
    const node = await db.appendNode("s", { role: "user", name: "", output: "hi" }, { atHead: true });
    await db.updateNode("s", node.id, { output: "hi there" });
    const logged = readWal(paths.wal);
    const file = nodeFiles()[0] as string;
    expect(logged.map((record) => record.rel)).toEqual([`history/${file}`, "meta.json", `history/${file}`]);
    expect(logged[2]?.data).toBe(readFileSync(join(paths.history, file), "utf8"));
    expect((await new SessionDB({ root: store.root }).getNode("s", node.id))?.output).toBe("hi there");
  });
});

describe("recovery after a power cut", () => {
  async function turnOfTwoNodes(): Promise<{ files: string[]; meta: string }> {
    await db.beginTurn("s", "t1");
    const first = await db.appendNode("s", { role: "user", name: "", output: "one" }, { atHead: true });
    await db.updateNode("s", first.id, { output: "one, edited" });
    await db.appendNode("s", { role: "llm", name: "m", caller: "", output: "two" }, { atHead: true });
    await db.endTurn("s", "t1", { status: "idle" });
    return { files: nodeFiles(), meta: readFileSync(paths.meta, "utf8") };
  }

  it("puts back files the cut took, tore or rolled back to an older logged text, and nothing else", async () => {
    const { files, meta } = await turnOfTwoNodes();
    const [first, second] = files as [string, string];
    const firstText = readFileSync(join(paths.history, first), "utf8");
    const secondText = readFileSync(join(paths.history, second), "utf8");
    const olderFirst = readWal(paths.wal).find((record) => record.rel === `history/${first}`)?.data as string;
    expect(olderFirst).not.toBe(firstText);

    writeFileSync(join(paths.history, first), olderFirst); // the update's rename undone
    rmSync(join(paths.history, second)); // the new name lost
    writeFileSync(paths.meta, ""); // torn: its data never reached the disk
    expect(
      planWalRestore(paths)
        .map(({ rel, reason }) => ({ rel, reason }))
        .sort((a, b) => a.rel.localeCompare(b.rel)),
    ).toEqual(
      [
        { rel: `history/${first}`, reason: "older" },
        { rel: `history/${second}`, reason: "missing" },
        { rel: "meta.json", reason: "torn" },
      ].sort((a, b) => a.rel.localeCompare(b.rel)),
    );

    // A fresh store (the process after the cut) reads the session whole: its first read puts the files back.
    const after = new SessionDB({ root: store.root });
    const nodes = await after.loadNodes("s");
    expect(nodes.map((node) => node.output)).toEqual(["one, edited", "two"]);
    expect(readFileSync(join(paths.history, first), "utf8")).toBe(firstText);
    expect(readFileSync(join(paths.history, second), "utf8")).toBe(secondText);
    expect(readFileSync(paths.meta, "utf8")).toBe(meta);
    expect(planWalRestore(paths)).toEqual([]);
  });

  it("rolls forward meta.json the cut put back as createSession wrote it (never logged, but replaced by a logged write)", async () => {
    const createdMeta = readFileSync(paths.meta, "utf8");
    await turnOfTwoNodes();
    const meta = readFileSync(paths.meta, "utf8");
    writeFileSync(paths.meta, createdMeta);
    expect(planWalRestore(paths).map(({ rel, reason }) => ({ rel, reason }))).toEqual([
      { rel: "meta.json", reason: "older" },
    ]);
    restoreFromWal(paths);
    expect(readFileSync(paths.meta, "utf8")).toBe(meta);
  });

  it("rolls forward a node file the cut put back to its checkpointed text", async () => {
    const { files } = await turnOfTwoNodes();
    await checkpointWal(paths);
    const first = files[0] as string;
    const checkpointed = readFileSync(join(paths.history, first), "utf8");
    await db.beginTurn("s", "t2");
    const node = (await db.loadNodes("s"))[0];
    await db.updateNode("s", node?.id as string, { output: "one, edited again" });
    await db.endTurn("s", "t2", { status: "idle" });
    const firstNow = readFileSync(join(paths.history, first), "utf8");

    writeFileSync(join(paths.history, first), checkpointed);
    expect(planWalRestore(paths).map(({ rel, reason }) => ({ rel, reason }))).toEqual([
      { rel: `history/${first}`, reason: "older" },
    ]);
    expect(restoreFromWal(paths)).toHaveLength(1);
    expect(readFileSync(join(paths.history, first), "utf8")).toBe(firstNow);
  });

  it("leaves a file holding a text the log never saw (another store wrote it after us)", async () => {
    const { files } = await turnOfTwoNodes();
    const first = files[0] as string;
    const foreign = JSON.stringify({
      ...JSON.parse(readFileSync(join(paths.history, first), "utf8")),
      output: "python",
    });
    writeFileSync(join(paths.history, first), foreign);
    expect(restoreFromWal(paths)).toEqual([]);
    expect(readFileSync(join(paths.history, first), "utf8")).toBe(foreign);
  });

  it("never puts back a path outside meta.json and history/ node files", async () => {
    await appendWal(
      paths.wal,
      [
        { rel: "../../escape.json", data: "{}", replaces: null },
        { rel: "history/notes.txt", data: "x", replaces: null },
      ],
      true,
    );
    expect(restoreFromWal(paths)).toEqual([]);
    expect(readdirSync(store.root)).not.toContain("escape.json");
  });

  it("a checkpoint makes the logged files durable on their own and empties the log", async () => {
    await turnOfTwoNodes();
    expect(readWal(paths.wal).length).toBeGreaterThan(0);
    await checkpointWal(paths);
    expect(readFileSync(paths.wal).length).toBe(0);
    expect((await new SessionDB({ root: store.root }).loadNodes("s")).map((node) => node.output)).toEqual([
      "one, edited",
      "two",
    ]);
  });

  it("the doctor reports what the log would put back, and --fix puts it back and checkpoints", async () => {
    const { files } = await turnOfTwoNodes();
    const second = files[1] as string;
    rmSync(join(paths.history, second));
    const { doctorSessions } = await import("../src/entries/store.js");
    const fresh = new SessionDB({ root: store.root });
    const report = await doctorSessions({ db: fresh, sessionId: "s" });
    expect(report.findings.filter((finding) => finding.kind === "wal_restore")).toMatchObject([
      { path: join(paths.history, second), fixed: false },
    ]);
    const fixed = await doctorSessions({ db: fresh, sessionId: "s", fix: true });
    expect(fixed.findings.filter((finding) => finding.kind === "wal_restore")).toMatchObject([{ fixed: true }]);
    expect(nodeFiles()).toContain(second);
    expect(readFileSync(paths.wal).length).toBe(0);
  });
});
