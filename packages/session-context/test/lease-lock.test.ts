// The leased lock every node and meta write runs under (lease-lock.ts): sections right after the lock was taken or
// touched trust it without reading its file again (issue 19: four system calls a section), and a lock taken away
// while this process could not touch it (suspended past the stale limit) is still noticed and taken back. Between
// sections a model's reply apart the lock file stays (not created and removed per write), and another process
// that wants it (its `.wanted` marker) gets it within tens of milliseconds, as it did when the lease let go at once.
import type * as NodeFs from "node:fs";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keepLeaseThroughTurn, withLeasedLock } from "../src/store/lease-lock.js";
import { removeTree } from "../src/testing/index.js";

const reads = vi.hoisted(() => ({ of: null as string | null, count: 0 }));
vi.mock("node:fs", async () => {
  const actual = await vi.importActual<typeof NodeFs>("node:fs");
  return {
    ...actual,
    readFileSync: ((path: NodeFs.PathOrFileDescriptor, options?: unknown) => {
      if (reads.of !== null && path === reads.of) reads.count += 1;
      return actual.readFileSync(path, options as BufferEncoding);
    }) as typeof NodeFs.readFileSync,
  };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "openprogram-lease-"));
});
afterEach(() => {
  vi.useRealTimers();
  removeTree(dir);
});

describe("a leased lock", () => {
  it("is not read again by sections that follow its taking or touching closely", async () => {
    const lock = join(dir, "lock");
    await withLeasedLock(lock, async () => undefined, { staleMs: 10_000 });
    reads.of = lock;
    reads.count = 0;
    for (let section = 0; section < 5; section++) await withLeasedLock(lock, async () => section, { staleMs: 10_000 });
    expect(reads.count).toBe(0);
    reads.of = null;
  });

  it("taken away while this process slept past the stale limit, is noticed and taken back", async () => {
    const lock = join(dir, "lock");
    vi.useFakeTimers({ toFake: ["Date"] });
    await withLeasedLock(lock, async () => undefined, { staleMs: 10_000 });
    const ours = readFileSync(lock, "utf8");
    // Another process judged it stale, broke it and holds it; that process has since died.
    writeFileSync(lock, `999999999 ${hostname()} deadbeef\n`);
    vi.setSystemTime(Date.now() + 11_000);
    let ran = false;
    await withLeasedLock(
      lock,
      async () => {
        ran = true;
        // The lock file names this process again, with a new token.
        const now = readFileSync(lock, "utf8");
        expect(now.startsWith(`${process.pid} `)).toBe(true);
        expect(now).not.toBe(ours);
      },
      { staleMs: 10_000 },
    );
    expect(ran).toBe(true);
  });

  it("used by a turn, outlives gaps of a model's reply between sections, and is let go soon after another process wants it", async () => {
    const lock = join(dir, "lock");
    const endTurn = keepLeaseThroughTurn(lock);
    await withLeasedLock(lock, async () => undefined, { staleMs: 10_000 });
    // The file names its holder with a token new at each taking.
    const taken = readFileSync(lock, "utf8");
    for (let section = 0; section < 3; section++) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await withLeasedLock(lock, async () => section, { staleMs: 10_000 });
    }
    // Taken once: the lease was kept through the gaps.
    expect(readFileSync(lock, "utf8")).toBe(taken);
    // Another process marks the lock wanted while this one is idle: the file is gone within a few looks.
    writeFileSync(`${lock}.wanted`, "");
    const asked = Date.now();
    while (existsSync(lock) && Date.now() - asked < 5_000) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(existsSync(lock)).toBe(false);
    expect(Date.now() - asked).toBeLessThan(900);
    endTurn();
  });

  it("is let go as soon as the turn using it ends, when no section runs", async () => {
    const lock = join(dir, "lock");
    const endTurn = keepLeaseThroughTurn(lock);
    await withLeasedLock(lock, async () => undefined, { staleMs: 10_000 });
    expect(existsSync(lock)).toBe(true);
    endTurn();
    expect(existsSync(lock)).toBe(false);
  });

  it("used by no turn, is let go at its first idle look, leaving no lock file", async () => {
    const lock = join(dir, "lock");
    await withLeasedLock(lock, async () => undefined, { staleMs: 10_000 });
    expect(existsSync(lock)).toBe(true);
    const since = Date.now();
    while (existsSync(lock) && Date.now() - since < 10_000) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(existsSync(lock)).toBe(false);
    // Not kept as a turn's lease is (up to a second).
    expect(Date.now() - since).toBeLessThan(900);
  });
});
