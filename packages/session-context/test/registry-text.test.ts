// A registry flush re-serialises only the entries that changed (registry-text.ts): the text must stay the very
// bytes the whole-registry serialisation (and so Python's json.dumps(indent=2)) writes, and a flush must still take
// in what another process wrote meanwhile.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { dumpsPythonIndented } from "../src/json/python-json.js";
import { RegistryText } from "../src/store/registry-text.js";
import type { SessionRecord } from "../src/store/types.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";

function entry(id: string, extra: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    status: "idle",
    pinned: false,
    archived: false,
    unread: false,
    agent_id: "main",
    title: `Session ${id}`,
    source: "cli",
    created_at: 1796000402.5594914,
    updated_at: 1796000410,
    channel: null,
    peer_display: null,
    peer_id: null,
    ...extra,
  };
}

describe("index.json's text, entry by entry", () => {
  it("is byte for byte the whole registry's serialisation, across changes, removals and odd values", () => {
    const text = new RegistryText();
    expect(text.render({})).toBe(dumpsPythonIndented({}));
    const entries: Record<string, SessionRecord> = {
      a: entry("a"),
      "123": entry("123", { title: "ünïcödé ✓ 🚀 \u2028", preview: 'quote " and \\ and \n newline' }),
      b: entry("b", { extra: { nested: [1, { deep: [] }], empty: {} } }),
    };
    expect(text.render(entries)).toBe(dumpsPythonIndented(entries));
    entries.a = { ...entries.a, status: "running" } as SessionRecord;
    delete entries.b;
    entries.c = entry("c", { title: undefined });
    expect(text.render(entries)).toBe(dumpsPythonIndented(entries));
    // Python reads it back as the same object.
    expect(JSON.parse(text.render(entries))).toEqual(JSON.parse(dumpsPythonIndented(entries)));
  });
});

describe("a registry flush", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-registry-text-");
  });
  afterEach(() => store.cleanup());

  it("writes the same file as a whole rewrite, and keeps an entry another process added meanwhile", async () => {
    for (const id of ["s1", "s2", "s3"]) await store.db.createSession({ id, title: `title ${id} é` });
    await store.db.flushRegistry();
    await store.db.beginTurn("s2", "turn_a");
    await store.db.appendNode("s2", { role: "user", output: "hello" }, { atHead: true });
    await store.db.endTurn("s2", "turn_a", { status: "idle" });
    await store.db.flushRegistry();
    const indexPath = join(store.root, "index.json");
    const written = readFileSync(indexPath, "utf8");
    expect(written).toBe(dumpsPythonIndented(JSON.parse(written)));
    expect((JSON.parse(written) as Record<string, SessionRecord>).s2?.preview).toBe("hello");

    // Another process (Python) rewrote index.json with an entry of its own: the next flush starts from that file.
    const foreign = JSON.parse(written) as Record<string, SessionRecord>;
    foreign.py = entry("py", { title: "from Python" });
    writeFileSync(indexPath, JSON.stringify(foreign, null, 2));
    await store.db.beginTurn("s1", "turn_b");
    await store.db.endTurn("s1", "turn_b", { status: "idle" });
    await store.db.flushRegistry();
    const after = JSON.parse(readFileSync(indexPath, "utf8")) as Record<string, SessionRecord>;
    expect(after.py?.title).toBe("from Python");
    expect(Object.keys(after).sort()).toEqual(["py", "s1", "s2", "s3"]);
    expect(readFileSync(indexPath, "utf8")).toBe(dumpsPythonIndented(after));
  });
});
