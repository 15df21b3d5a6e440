// Markdown tables of one workload's record; "ours / this" is this project's
// figure divided by the row's (above 1: we are slower, or use more).
import { formatNumber as f, median, quantile } from "./stats.mjs";

const OURS = "openprogram";

/** "1.23x", or empty when this project was not in the run (the tool turn, until ours has tools). */
function ratio(value) {
  return Number.isFinite(value) ? `${f(value)}x` : "";
}

function table(header, rows) {
  return [header, header.map(() => "---"), ...rows].map((row) => `| ${row.join(" | ")} |`).join("\n");
}

function loads(record) {
  return `load average ${record.loadBefore.toFixed(2)} before, ${record.loadAfter.toFixed(2)} after`;
}

/** The record as a Markdown table with a heading line. */
export function renderTable(record) {
  const rows = record.rows;
  const ours = rows.find((row) => row.id === OURS);
  const title = `**${record.workload}** (${record.latency} ms model latency; ${record.started.slice(0, 16)}Z; ${loads(record)})`;
  switch (record.workload) {
    case "turn":
    case "tool-turn": {
      const oursMedian = ours ? median(ours.times) : Number.NaN;
      const oursP99 = ours ? quantile(ours.times, 0.99) : Number.NaN;
      return `${title}\n\n${table(
        [
          "variant",
          "durability",
          "setting",
          "turns",
          "median ms",
          "p99 ms",
          "CPU ms/turn",
          "ours / this (median)",
          "ours / this (p99)",
        ],
        rows.map((row) => [
          row.id,
          row.durability,
          `${row.setting} ${JSON.stringify(row.settings)}`,
          row.times.length,
          f(median(row.times)),
          f(quantile(row.times, 0.99)),
          f(row.cpuMsPerTurn),
          ratio(oursMedian / median(row.times)),
          ratio(oursP99 / quantile(row.times, 0.99)),
        ]),
      )}`;
    }
    case "concurrent": {
      const oursRate = ours ? median(ours.throughputs) : Number.NaN;
      return `${title}\n\n${table(
        [
          "variant",
          "durability",
          "turns/s (median of rounds)",
          "rounds",
          "turn median ms",
          "turn p99 ms",
          "CPU ms/turn",
          "event loop busy (median of rounds)",
          "ours / this (turns/s)",
          "ours / this (p99)",
        ],
        rows.map((row) => [
          row.id,
          row.durability,
          f(median(row.throughputs)),
          row.throughputs.map(f).join(", "),
          f(median(row.times)),
          f(quantile(row.times, 0.99)),
          f(row.cpuMsPerTurn),
          row.loopBusy ? `${(median(row.loopBusy) * 100).toFixed(0)}%` : "",
          ratio(oursRate / median(row.throughputs)),
          ratio((ours ? quantile(ours.times, 0.99) : Number.NaN) / quantile(row.times, 0.99)),
        ]),
      )}`;
    }
    case "resume":
      return `${title}\n\n${table(
        [
          "variant",
          "durability",
          "cycles",
          "finished steps asked again (each cycle)",
          "step 4 sent again",
          "resume ms (median)",
          "resuming process ms (median)",
          "failures",
        ],
        rows.map((row) => {
          const good = row.cycles.filter((cycle) => !cycle.error);
          return [
            row.id,
            row.durability,
            row.cycles.length,
            good.map((cycle) => cycle.repeated).join(", "),
            good.map((cycle) => cycle.step4Requests).join(", "),
            f(median(good.map((cycle) => cycle.resumeMs))),
            f(median(good.map((cycle) => cycle.processMs))),
            row.cycles
              .filter((cycle) => cycle.error)
              .map((cycle) => cycle.error.slice(0, 120))
              .join("; ") || "0",
          ];
        }),
      )}`;
    case "fsync":
      return `${title}\n\n${table(
        [
          "variant",
          "durability",
          "fsync/turn",
          "fdatasync/turn",
          "ms in fsync+fdatasync/turn (strace -T, all threads)",
          "renames/turn",
          "openat/turn",
          "mkdir/turn",
          "unlink/turn",
          "processes started/turn",
          "PostgreSQL wal_sync/turn (server-wide)",
        ],
        rows.map((row) => {
          const count = (...names) => names.reduce((sum, name) => sum + (row.perTurn[name] ?? 0), 0);
          const seconds = (row.secondsPerTurn.fsync ?? 0) + (row.secondsPerTurn.fdatasync ?? 0);
          return [
            row.id,
            row.durability,
            f(count("fsync")),
            f(count("fdatasync")),
            f(seconds * 1000),
            f(count("rename", "renameat", "renameat2")),
            f(count("openat")),
            f(count("mkdir", "mkdirat")),
            f(count("unlink", "unlinkat")),
            f(count("execve")),
            row.wal ? f(row.wal.walSync) : "",
          ];
        }),
      )}`;
    case "memory":
      return `${title}\n\n${table(
        [
          "variant",
          "sessions",
          "heap KiB per idle session",
          "RSS KiB per idle session",
          "MiB on disk per 1,000 stored sessions",
          "ours / this (heap)",
          "ours / this (disk)",
        ],
        rows.map((row) => [
          row.id,
          row.sessions,
          f(row.heapPerSessionBytes / 1024),
          f(row.rssPerSessionBytes / 1024),
          f(row.storedBytesPer1000 / 2 ** 20),
          ratio((ours?.heapPerSessionBytes ?? Number.NaN) / row.heapPerSessionBytes),
          ratio((ours?.storedBytesPer1000 ?? Number.NaN) / row.storedBytesPer1000),
        ]),
      )}`;
    case "flatness":
      return `${title}\n\n${table(
        [
          "variant",
          "turns",
          "first 10 median ms",
          "last 10 median ms",
          "last / first",
          "2nd tenth median ms",
          "last tenth median ms",
          "last / 2nd tenth",
        ],
        rows.map((row) => [
          row.id,
          row.turns,
          f(row.first10),
          f(row.last10),
          ratio(row.ratio),
          f(row.secondTenth),
          f(row.lastTenth),
          ratio(row.lastTenth / row.secondTenth),
        ]),
      )}`;
    case "profile":
      return `${title}\n\n${rows
        .map(
          (row) =>
            `${row.id}: ${f(row.cpuMsPerTurn)} ms CPU per turn, ${f(median(row.times))} ms median turn; self time by place:\n\n${table(
              ["place", "ms per turn", "share"],
              row.summary.places
                .slice(0, 20)
                .map((place) => [place.name, f(place.ms / row.turns), `${(place.share * 100).toFixed(1)}%`]),
            )}\n\ntop functions:\n\n${table(
              ["function", "ms per turn", "share"],
              row.summary.functions
                .slice(0, 20)
                .map((fn) => [fn.name, f(fn.ms / row.turns), `${(fn.share * 100).toFixed(1)}%`]),
            )}`,
        )
        .join("\n\n")}`;
    default:
      return `${title}\n\n${JSON.stringify(rows)}`;
  }
}
