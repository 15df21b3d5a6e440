// A directory's fsync shared by the callers that need it at once (group commit): each caller is answered by an
// fsync that began after it called, callers arriving while one runs share the next, and a failure reaches only
// the callers that fsync answered. fsync(2) is the real one, counted (and failed once on demand) by a wrapper.
import type * as Fs from "node:fs";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const calls = vi.hoisted(() => ({ started: 0, failNext: null as NodeJS.ErrnoException | null }));

vi.mock("node:fs", async (importOriginal) => {
  const actual = await importOriginal<typeof Fs>();
  const fsync = (descriptor: number, callback: (error: NodeJS.ErrnoException | null) => void): void => {
    calls.started++;
    const failure = calls.failNext;
    calls.failNext = null;
    actual.fsync(descriptor, (error) => callback(failure ?? error));
  };
  return { ...actual, fsync };
});

const { syncDirectoryShared } = await import("../src/store/shared-directory-sync.js");

describe("syncDirectoryShared", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "openprogram-dirsync-"));
    calls.started = 0;
    calls.failNext = null;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("starts at once when none runs, and gives the callers arriving meanwhile one fsync begun after them", async () => {
    const first = syncDirectoryShared(dir);
    expect(calls.started, "the first caller's fsync began at its call").toBe(1);
    const later = Array.from({ length: 9 }, () => syncDirectoryShared(dir));
    expect(calls.started, "no fsync begins while one runs").toBe(1);
    expect(new Set(later).size, "the nine share one").toBe(1);
    await first;
    await Promise.all(later);
    expect(calls.started, "ten callers, two fsyncs").toBe(2);
    await syncDirectoryShared(dir);
    expect(calls.started, "with none running, the next caller's begins at once").toBe(3);
  });

  it("rejects only the callers a failed fsync answered; those queued behind it get their own", async () => {
    calls.failNext = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
    const failing = syncDirectoryShared(dir);
    const queued = syncDirectoryShared(dir);
    await expect(failing).rejects.toMatchObject({ code: "EIO" });
    await expect(queued).resolves.toBeUndefined();
    expect(calls.started).toBe(2);
  });

  it("rejects for a directory that is not there, and serves it once it is", async () => {
    const missing = join(dir, "later");
    await expect(syncDirectoryShared(missing)).rejects.toMatchObject({ code: "ENOENT" });
    mkdirSync(missing);
    await expect(syncDirectoryShared(missing)).resolves.toBeUndefined();
  });
});
