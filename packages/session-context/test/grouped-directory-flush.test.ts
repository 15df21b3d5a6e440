// The root's fsync shared by creates that finish together (group commit): every caller must resolve only after an
// fsync that began after it asked, and the callers that ask while one runs share the next one. fsync(2) of the real
// directory is held by a wrapper until the test lets it finish, so the order is the test's, not the disk's.
import type * as Fs from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const held = vi.hoisted(() => ({
  fsyncs: [] as { finish: (error?: NodeJS.ErrnoException) => void }[],
}));

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof Fs>();
  const fsync = (descriptor: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
    actual.fsync(descriptor, (error) => {
      held.fsyncs.push({ finish: (injected) => callback(injected ?? error) });
    });
  };
  return { ...actual, fsync, default: { ...actual, fsync } };
});

const { GroupedDirectoryFlush } = await import("../src/store/grouped-directory-flush.js");

/** Waits until `count` fsyncs have been issued (each is held until finished). */
async function fsyncsIssued(count: number): Promise<void> {
  for (let tries = 0; held.fsyncs.length < count; tries++) {
    if (tries > 2_000) throw new Error(`only ${held.fsyncs.length} fsyncs were issued, expected ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe("a directory flush shared by the callers that ask while one runs", () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "openprogram-grouped-flush-"));
    held.fsyncs.length = 0;
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("starts one flush; callers during it wait for one more, shared, which starts when the first ends", async () => {
    const flusher = new GroupedDirectoryFlush(directory);
    const settled: string[] = [];
    const first = flusher.flush().then(() => settled.push("first"));
    await fsyncsIssued(1);
    // Asked while the first flush runs: it may have begun before their changes, so they wait for the next.
    const during = Array.from({ length: 5 }, (_, index) => flusher.flush().then(() => settled.push(`during ${index}`)));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.fsyncs).toHaveLength(1);
    held.fsyncs[0]?.finish();
    await first;
    expect(settled).toEqual(["first"]);
    await fsyncsIssued(2);
    // One flush for the five, begun after they asked; none of them resolved with the first.
    expect(held.fsyncs).toHaveLength(2);
    const late = flusher.flush().then(() => settled.push("late"));
    held.fsyncs[1]?.finish();
    await Promise.all(during);
    expect(settled.slice(1).sort()).toEqual(["during 0", "during 1", "during 2", "during 3", "during 4"]);
    // Asked while the second ran: a third flush, of its own.
    await fsyncsIssued(3);
    expect(settled).not.toContain("late");
    held.fsyncs[2]?.finish();
    await late;
    expect(held.fsyncs).toHaveLength(3);
  });

  it("gives every caller sharing a failed flush its error, and the next caller a new flush", async () => {
    const flusher = new GroupedDirectoryFlush(directory);
    const first = flusher.flush();
    await fsyncsIssued(1);
    const sharing = [flusher.flush(), flusher.flush()];
    held.fsyncs[0]?.finish();
    await first;
    await fsyncsIssued(2);
    const failure = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
    held.fsyncs[1]?.finish(failure);
    for (const outcome of await Promise.allSettled(sharing))
      expect(outcome).toMatchObject({ status: "rejected", reason: failure });
    const after = flusher.flush();
    await fsyncsIssued(3);
    held.fsyncs[2]?.finish();
    await expect(after).resolves.toBeUndefined();
  });
});
