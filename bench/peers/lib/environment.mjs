// What every workload needs around the peers: the fake server in its own
// process, a PostgreSQL database of its own for the run, and scratch folders
// on the same disk for every peer's store.
import { fork } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import pg from "pg";

const HERE = new URL(".", import.meta.url);

/** Starts the fake OpenAI-compatible server process with a fixed reply latency ("tools": the tool-call server). */
export async function startFakeServer(latencyMs, kind = "text") {
  const child = fork(new URL("fake-server-process.mjs", HERE), [String(latencyMs), kind], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const listeners = new Set();
  child.on("message", (message) => {
    for (const listener of listeners) listener(message);
  });
  const lines = createInterface({ input: child.stdout });
  const baseUrl = await new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the fake server exited (${code}) before listening`)));
    lines.once("line", (line) => resolve(JSON.parse(line).baseUrl));
  });
  return {
    baseUrl,
    /** Calls `listener` with each step request the server receives; returns a function that stops it. */
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.disconnect();
      }),
  };
}

const PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres";

/** A PostgreSQL database of this run's own on the local server; `drop()` removes it. */
export async function createPgDatabase() {
  const name = `peer_bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgresql://postgres@127.0.0.1:5432/${name}`,
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** The server's synchronous_commit, as every connection gets it. */
export async function pgSynchronousCommit(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit;
  } finally {
    await client.end();
  }
}

/** Where every scratch folder is made (not tmpfs here: /tmp is on the root disk). */
const SCRATCH_ROOT = process.env.PEER_BENCH_TMP ?? tmpdir();
/** Scratch folders done with in this run, moved here whole and deleted at its end (emptyTrash). */
const TRASH = join(SCRATCH_ROOT, `peer-bench-trash-${process.pid}`);
/** Touched when a run has deleted its scratch folders (see settleAfterDeletes). */
const DELETED_STAMP = join(SCRATCH_ROOT, "peer-bench-deleted-at");
/**
 * How long deleting files slows creating them on this disk: ext4 without a journal, creating a file, skips one by
 * one every inode freed in the last minute (`RECENTCY_MIN` in the kernel's ialloc.c; five minutes more while the
 * inode table block holding it is not yet written back, which writeback does within about 35 s). Deleting a run's
 * thousands of session files and then measuring made every store that creates files pay for the harness's
 * clean-up (measured with perf: a third of our process's CPU in that search, in the concurrent workload right after
 * a deletion).
 */
export const DELETE_SETTLE_MS = 65_000;

/**
 * A scratch folder on the machine's disk; `remove()` moves it to this run's trash (a rename frees no inode), which
 * emptyTrash deletes once every workload is measured.
 */
export function scratchFolder(label) {
  const path = mkdtempSync(join(SCRATCH_ROOT, `peer-bench-${label}-`));
  return {
    path,
    remove: () => {
      mkdirSync(TRASH, { recursive: true });
      renameSync(path, join(TRASH, basename(path)));
    },
  };
}

/** Deletes this run's trash and notes when, so the next run waits before it measures (settleAfterDeletes). */
export function emptyTrash() {
  rmSync(TRASH, { recursive: true, force: true, maxRetries: 3 });
  writeFileSync(DELETED_STAMP, "");
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/**
 * Before measuring: deletes what an earlier run left in its trash (a run that was stopped), then waits until
 * DELETE_SETTLE_MS have passed since the last deletion, so no store pays for an earlier run's clean-up.
 */
export async function settleAfterDeletes(log) {
  const left = readdirSync(SCRATCH_ROOT).filter((name) => {
    const pid = Number(/^peer-bench-trash-(\d+)$/.exec(name)?.[1] ?? Number.NaN);
    return Number.isInteger(pid) && !isAlive(pid);
  });
  for (const name of left) rmSync(join(SCRATCH_ROOT, name), { recursive: true, force: true, maxRetries: 3 });
  if (left.length > 0) writeFileSync(DELETED_STAMP, "");
  let deletedAt = 0;
  try {
    deletedAt = statSync(DELETED_STAMP).mtimeMs;
  } catch {
    // no run has deleted anything here
  }
  const waitMs = deletedAt + DELETE_SETTLE_MS - Date.now();
  if (waitMs <= 0) return;
  log(`waiting ${Math.ceil(waitMs / 1000)} s: files deleted just now make file creation slow on this disk`);
  await new Promise((resolve) => setTimeout(resolve, waitMs));
}
