// A turn's commit writes its objects as one pack (src/store/git/pack-file.ts), and the smaller packs are merged
// now and then (pack-merge.ts): git must read every pack as its own, and a kill anywhere leaves a repository git
// accepts and the next turn commits on.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctorSessions, SessionDB } from "../src/entries/store.js";
import { forgetRepository } from "../src/store/git/in-process-commit.js";
import { CHUNK_BYTES, forgetDeflatedChunks } from "../src/store/git/chunked-deflate.js";
import { hashObject } from "../src/store/git/loose-objects.js";
import {
  packEntries,
  packEntry,
  packFiles,
  parsePackIndex,
  readPackedObject,
  writePack,
} from "../src/store/git/pack-file.js";
import { listPacks, PACKS_BEFORE_MERGE, packsToMerge } from "../src/store/git/pack-merge.js";
import { createTempStore, type TempStore } from "../src/testing/index.js";
import { assertHealthy, chatTurn, plainGit } from "./helpers.js";

const packFolder = (dir: string): string => join(dir, ".git", "objects", "pack");
const looseObjects = (dir: string): string[] =>
  readdirSync(join(dir, ".git", "objects")).filter((name) => /^[0-9a-f]{2}$/.test(name));

describe("a pack of a commit's objects", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-pack-");
  });
  afterEach(() => store.cleanup());

  it("is the pack and index git itself makes of it: git's index-pack writes the same index byte for byte", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    const gitDir = join(dir, ".git");
    const objects = [
      { type: "blob" as const, content: Buffer.from("x".repeat(5000)) },
      { type: "blob" as const, content: Buffer.from("ünïcode\n") },
      { type: "blob" as const, content: Buffer.alloc(0) },
      { type: "blob" as const, content: Buffer.alloc(16) },
    ].map((object) => ({ ...object, id: hashObject(object.type, object.content) }));
    const name = await writePack(gitDir, objects.map(packEntry));
    const pack = join(packFolder(dir), `${name}.pack`);
    expect(plainGit(dir, "verify-pack", `${pack.slice(0, -5)}.idx`)).toBe("");
    const rebuilt = join(store.root, "rebuilt.idx");
    plainGit(dir, "index-pack", "-o", rebuilt, pack);
    expect(readFileSync(rebuilt).equals(readFileSync(`${pack.slice(0, -5)}.idx`))).toBe(true);
    for (const object of objects) {
      const read = execFileSync("git", ["cat-file", "blob", object.id], {
        cwd: dir,
        env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
      });
      expect(read.equals(object.content)).toBe(true);
      expect(readPackedObject(gitDir, object.id)).toEqual({ type: "blob", content: object.content, pack: name });
    }
    expect(readPackedObject(gitDir, "0".repeat(40))).toBeNull();
    expect(readdirSync(packFolder(dir)).filter((file) => file.startsWith("tmp_"))).toEqual([]);
    expect(readdirSync(packFolder(dir)).filter((file) => file.startsWith(name))).toEqual([
      `${name}.idx`,
      `${name}.pack`,
    ]);
  });

  it("deflates a long session's history tree reusing the front the last commit compressed; git reads it", async () => {
    forgetDeflatedChunks();
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    const gitDir = join(dir, ".git");
    /** The zlib stream of history/'s tree at HEAD, as its pack holds it. */
    const historyTreeEntry = (): Buffer => {
      const id = plainGit(dir, "rev-parse", "HEAD:history");
      for (const name of readdirSync(packFolder(dir)).filter((file) => file.endsWith(".idx"))) {
        const index = parsePackIndex(readFileSync(join(packFolder(dir), name)));
        const pack = readFileSync(join(packFolder(dir), name.replace(/\.idx$/, ".pack")));
        const entry = packEntries(index, pack).find((candidate) => candidate.id === id);
        // Past the entry's header (its type and size, 7 bits a byte while the top bit is set): the zlib stream.
        if (entry) return entry.bytes.subarray(entry.bytes.findIndex((byte) => (byte & 0x80) === 0) + 1);
      }
      throw new Error(`history/'s tree ${id} is in no pack`);
    };
    // Enough node files for a tree of three chunks and more (each entry is about 52 bytes).
    const turn = async (turnId: string, nodes: number): Promise<void> => {
      await store.db.beginTurn("s", turnId);
      for (let index = 0; index < nodes; index++) await store.db.appendNode("s", { role: "user", output: `${index}` });
      await store.db.endTurn("s", turnId, { status: "idle" });
    };
    await turn("turn_a", Math.ceil((3 * CHUNK_BYTES) / 50));
    const before = historyTreeEntry();
    await turn("turn_b", 3);
    const after = historyTreeEntry();
    // The front of the new tree's stream is the old one's, byte for byte: more than a chunk's worth was copied.
    let shared = 0;
    while (shared < before.length && before[shared] === after[shared]) shared++;
    expect(shared).toBeGreaterThan(CHUNK_BYTES);
    assertHealthy(dir);
    expect(readPackedObject(gitDir, plainGit(dir, "rev-parse", "HEAD:history"))?.type).toBe("tree");
    expect(plainGit(dir, "ls-tree", "--name-only", "HEAD", "history/").split("\n").length).toBe(
      readdirSync(join(dir, "history")).length,
    );
  });

  it("reads an object past a torn pack that names it, from another pack that holds it whole, or not at all", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const gitDir = join(store.root, "s", ".git");
    const content = Buffer.from("twice packed ".repeat(50));
    const id = hashObject("blob", content);
    const torn = packFiles([packEntry({ id, type: "blob", content })]);
    // Its index is whole; its pack is cut inside the object's compressed bytes.
    writeFileSync(join(gitDir, "objects", "pack", `${torn.name}.pack`), torn.pack.subarray(0, 20));
    writeFileSync(join(gitDir, "objects", "pack", `${torn.name}.idx`), torn.index);
    expect(readPackedObject(gitDir, id)).toBeNull();
    const whole = await writePack(gitDir, [
      packEntry({ id, type: "blob", content }),
      packEntry({ id: hashObject("blob", Buffer.alloc(0)), type: "blob", content: Buffer.alloc(0) }),
    ]);
    expect(readPackedObject(gitDir, id)).toEqual({ type: "blob", content, pack: whole });
  });

  it("of each turn: no loose object, one pack and one commit per turn (and one for session init), git's view clean", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    for (let turn = 0; turn < 3; turn++) await chatTurn(store.db, "s", `turn_${turn}`);
    expect(looseObjects(dir)).toEqual([]);
    expect(listPacks(join(dir, ".git"))).toHaveLength(4);
    expect(plainGit(dir, "log", "--format=%s")).toBe("turn turn_2\nturn turn_1\nturn turn_0\nsession init");
    assertHealthy(dir);
  });
});

describe("merging a session's packs", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-pack-merge-");
  });
  afterEach(() => store.cleanup());

  it("chooses as git's geometric repack does: packs stay few, and each merge takes the small ones", () => {
    expect(packsToMerge([7, 7, 7, 7])).toBe(4);
    // Already a progression by two: only the two smallest (the least a merge takes).
    expect(packsToMerge([7, 14, 28, 56])).toBe(2);
    // The small ones, and the next that is under twice what they hold.
    expect(packsToMerge([7, 7, 7, 30, 200])).toBe(4);
    let packs: number[] = [];
    let copied = 0;
    for (let turn = 0; turn < 2_000; turn++) {
      packs.push(7);
      if (packs.length <= PACKS_BEFORE_MERGE) continue;
      packs.sort((a, b) => a - b);
      const taken = packsToMerge(packs);
      const merged = packs.slice(0, taken).reduce((sum, count) => sum + count, 0);
      copied += merged;
      packs = [merged, ...packs.slice(taken)];
    }
    expect(packs.length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE);
    // Each turn's objects are copied a few times in all, not once per later turn.
    expect(copied / (2_000 * 7)).toBeLessThan(8);
  });

  it("keeps a long session's packs few, every commit readable, and git fsck content", async () => {
    await store.db.createSession({ id: "long", forTurn: true });
    const dir = join(store.root, "long");
    const turns = PACKS_BEFORE_MERGE * 2 + 4;
    for (let turn = 0; turn < turns; turn++) await chatTurn(store.db, "long", `turn_${turn}`);
    const packs = listPacks(join(dir, ".git"));
    expect(packs.length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE);
    expect(packs.length).toBeGreaterThan(1);
    expect(plainGit(dir, "rev-list", "--count", "HEAD")).toBe(String(turns + 1));
    for (const pack of packs) expect(plainGit(dir, "verify-pack", join(packFolder(dir), `${pack.name}.idx`))).toBe("");
    // Every file of every commit is there: the first turn's node files are read back from a merged pack.
    expect(plainGit(dir, "show", "--format=", "HEAD~" + String(turns - 1))).toContain("turn_0 0");
    assertHealthy(dir);
  });

  it("leaves git's own packs (deltas) to git, and commits beside them after git gc", async () => {
    await store.db.createSession({ id: "gc", forTurn: true });
    const dir = join(store.root, "gc");
    for (let turn = 0; turn < 4; turn++) await chatTurn(store.db, "gc", `before_${turn}`);
    plainGit(dir, "gc", "--quiet", "--aggressive");
    forgetRepository(join(dir, ".git"));
    const gitsPack = listPacks(join(dir, ".git")).map((pack) => pack.name);
    expect(gitsPack).toHaveLength(1);
    // verify-pack -v lists a delta with its chain depth and base: git's pack holds some.
    const listing = plainGit(dir, "verify-pack", "-v", join(packFolder(dir), `${gitsPack[0]}.idx`));
    expect(listing.split("\n").some((line) => /^[0-9a-f]{40} \w+ +\d+ \d+ \d+ \d+ [0-9a-f]{40}$/.test(line))).toBe(
      true,
    );
    for (let turn = 0; turn < PACKS_BEFORE_MERGE + 2; turn++) await chatTurn(store.db, "gc", `after_${turn}`);
    const names = listPacks(join(dir, ".git")).map((pack) => pack.name);
    expect(names).toContain(gitsPack[0]);
    expect(names.length).toBeLessThanOrEqual(PACKS_BEFORE_MERGE);
    assertHealthy(dir);
  });

  it("continues in a new process from a HEAD commit that is only in a pack, still without running git", async () => {
    await store.db.createSession({ id: "s", forTurn: true });
    const dir = join(store.root, "s");
    await chatTurn(store.db, "s", "turn_a");
    const head = plainGit(dir, "rev-parse", "HEAD");
    expect(existsSync(join(dir, ".git", "objects", head.slice(0, 2), head.slice(2)))).toBe(false);
    // What a new process knows of the repository: nothing.
    forgetRepository(join(dir, ".git"));
    await chatTurn(new SessionDB({ root: store.root }), "s", "turn_b");
    expect(plainGit(dir, "rev-parse", "HEAD~1")).toBe(head);
    // git commit writes COMMIT_EDITMSG; the in-process commit does not.
    expect(readFileSync(join(dir, ".git", "COMMIT_EDITMSG"), "utf8")).not.toContain("turn_b");
    assertHealthy(dir);
  });
});

describe("what a kill leaves of a pack", () => {
  let store: TempStore;
  beforeEach(() => {
    store = createTempStore("openprogram-pack-kill-");
  });
  afterEach(() => store.cleanup());

  async function session(): Promise<{ dir: string; gitDir: string }> {
    await store.db.createSession({ id: "s", forTurn: true });
    for (let turn = 0; turn < 3; turn++) await chatTurn(store.db, "s", `turn_${turn}`);
    const dir = join(store.root, "s");
    return { dir, gitDir: join(dir, ".git") };
  }

  async function assertRecovers(dir: string): Promise<void> {
    expect(() => plainGit(dir, "fsck", "--strict"), "git fsck passes with what the kill left").not.toThrow();
    const before = plainGit(dir, "rev-parse", "HEAD");
    forgetRepository(join(dir, ".git"));
    await chatTurn(new SessionDB({ root: store.root }), "s", "turn_after");
    expect(plainGit(dir, "rev-parse", "HEAD~1")).toBe(before);
    assertHealthy(dir);
    expect((await doctorSessions({ db: new SessionDB({ root: store.root }) })).healthy).toBe(true);
  }

  it("mid pack write: a torn tmp_pack_ file (and a pack without its index), which git ignores", async () => {
    const { dir, gitDir } = await session();
    writeFileSync(join(packFolder(dir), "tmp_pack_1f2e3d4c"), Buffer.from("PACK\0\0\0\x02\0\0"));
    const { name, pack } = packFiles([
      packEntry({ id: hashObject("blob", Buffer.from("lost")), type: "blob", content: Buffer.from("lost") }),
    ]);
    writeFileSync(join(packFolder(dir), `${name}.pack`), pack);
    writeFileSync(join(packFolder(dir), "tmp_idx_5a6b7c8d"), Buffer.from([0xff, 0x74]));
    expect(listPacks(gitDir).map((listed) => listed.name)).not.toContain(name);
    await assertRecovers(dir);
  });

  it("mid merge: the merged pack whole beside the packs it took (each object twice), which git accepts", async () => {
    const { dir, gitDir } = await session();
    const packs = listPacks(gitDir);
    const entries = packs.flatMap((listed) =>
      packEntries(
        parsePackIndex(readFileSync(join(packFolder(dir), `${listed.name}.idx`))),
        readFileSync(join(packFolder(dir), `${listed.name}.pack`)),
      ),
    );
    const unique = [...new Map(entries.map((entry) => [entry.id, entry])).values()];
    const merged = await writePack(gitDir, unique);
    expect(listPacks(gitDir)).toHaveLength(packs.length + 1);
    expect(plainGit(dir, "verify-pack", join(packFolder(dir), `${merged}.idx`))).toBe("");
    await assertRecovers(dir);
  });
});
