// Durable operations per turn, counted with strace: each variant's child runs
// `warm` turns, then `turns` timed turns between two marks (a stat of a path
// that cannot exist), under `strace -f -T`; the calls between the marks,
// divided by `turns`, are what one turn costs (setup and warm-up excluded),
// and the time inside fsync and fdatasync is their wall time (-T), summed
// over every thread (libuv's pool included). PostgreSQL's fsyncs happen in the
// server, not the client: for those variants the server's pg_stat_wal
// (wal_sync, wal_write) is read before and after the child instead, less a run
// of the same child with no timed turns (server-wide: another database's
// writes in that window count too).
import { readFileSync, rmSync } from "node:fs";
import { loadavg } from "node:os";
import pg from "pg";
import { createPgDatabase, scratchFolder } from "../lib/environment.mjs";
import { runChild } from "../lib/spawn-child.mjs";

const TRACED = [
  "fsync",
  "fdatasync",
  "rename",
  "renameat",
  "renameat2",
  "openat",
  "mkdir",
  "mkdirat",
  "unlink",
  "unlinkat",
  "clone",
  "clone3",
  "execve",
];
const MARKS = ["stat", "newfstatat", "statx"];

/** Counts each traced call (and its -T time) between the child's start and end marks. */
export function countBetweenMarks(log) {
  const calls = {};
  const seconds = {};
  let inside = false;
  for (const line of log.split("\n")) {
    if (line.includes("peer-bench-mark-start")) inside = true;
    else if (line.includes("peer-bench-mark-end")) inside = false;
    if (!inside) continue;
    const started = /^(?:\[pid\s+\d+\]\s+|\d+\s+)?(\w+)\(/.exec(line);
    if (started && TRACED.includes(started[1])) calls[started[1]] = (calls[started[1]] ?? 0) + 1;
    const finished = /^(?:\[pid\s+\d+\]\s+|\d+\s+)?(?:<\.\.\. (\w+) resumed>|(\w+)\().*<([\d.]+)>\s*$/.exec(line);
    if (finished) {
      const name = finished[1] ?? finished[2];
      if (TRACED.includes(name)) seconds[name] = (seconds[name] ?? 0) + Number(finished[3]);
    }
  }
  return { calls, seconds };
}

async function walStats() {
  const client = new pg.Client({ connectionString: "postgresql://postgres@127.0.0.1:5432/postgres" });
  await client.connect();
  try {
    const row = (await client.query("SELECT wal_sync, wal_write FROM pg_stat_wal")).rows[0];
    return { walSync: Number(row.wal_sync), walWrite: Number(row.wal_write) };
  } finally {
    await client.end();
  }
}

async function walPerRun(variant, server, warm, turns) {
  const dir = scratchFolder(`wal-${variant.id}`);
  const database = await createPgDatabase();
  try {
    const env = { PEER_BENCH_BASE_URL: server.baseUrl, PEER_BENCH_DIR: dir.path, PEER_BENCH_PG_URL: database.url };
    const before = await walStats();
    await runChild({ variant: variant.id, mode: "turns", options: { warm, turns, session: "s_fsync" }, env });
    const after = await walStats();
    return { walSync: after.walSync - before.walSync, walWrite: after.walWrite - before.walWrite };
  } finally {
    dir.remove();
    await database.drop();
  }
}

async function traced(variant, server, warm, turns) {
  const dir = scratchFolder(`fsync-${variant.id}`);
  const database = variant.id.includes("-pg") ? await createPgDatabase() : null;
  const output = `${dir.path}.strace`;
  try {
    const env = {
      PEER_BENCH_BASE_URL: server.baseUrl,
      PEER_BENCH_DIR: dir.path,
      PEER_BENCH_PG_URL: database?.url ?? "",
    };
    const wrapper = ["strace", "-f", "-T", "-qq", "-o", output, "-e", `trace=${[...TRACED, ...MARKS].join(",")}`];
    const result = await runChild({
      variant: variant.id,
      mode: "turns",
      options: { warm, turns, session: "s_fsync" },
      env,
      wrapper,
    });
    return { ...countBetweenMarks(readFileSync(output, "utf8")), times: result.times };
  } finally {
    rmSync(output, { force: true });
    dir.remove();
    await database?.drop();
  }
}

/** Per-turn counts of each traced call, per variant. */
export async function runFsyncWorkload({ variants, server, warm, turns, log }) {
  const rows = [];
  for (const variant of variants) {
    const { calls, seconds } = await traced(variant, server, warm, turns);
    const perTurn = Object.fromEntries(Object.entries(calls).map(([name, count]) => [name, count / turns]));
    const secondsPerTurn = Object.fromEntries(Object.entries(seconds).map(([name, total]) => [name, total / turns]));
    let wal = null;
    if (variant.id.includes("-pg")) {
      const base = await walPerRun(variant, server, warm, 0);
      const full = await walPerRun(variant, server, warm, turns);
      wal = { walSync: (full.walSync - base.walSync) / turns, walWrite: (full.walWrite - base.walWrite) / turns };
    }
    rows.push({
      id: variant.id,
      peer: variant.peer,
      durability: variant.durability,
      perTurn,
      secondsPerTurn,
      wal,
      load: loadavg()[0],
    });
    log(
      `${variant.id}: fsync ${perTurn.fsync ?? 0}, fdatasync ${perTurn.fdatasync ?? 0} per turn${wal ? `; server wal_sync ${wal.walSync}` : ""}`,
    );
  }
  return rows;
}
