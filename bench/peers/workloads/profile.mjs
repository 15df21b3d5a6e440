// Where a turn's time goes, for the variants we are slower than: the child
// runs V8's CPU profiler (what `node --cpu-prof` uses, through node:inspector)
// around its timed turns only; self time is summed per function and per
// place (this project's folder under dist/, a node: module, a dependency, or a
// native binding by name). Off-CPU waits (fsync in libuv's threads, the model's
// reply) show as (idle); the fsync workload's strace -w gives their wall time.
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { scratchFolder } from "../lib/environment.mjs";
import { runChild } from "../lib/spawn-child.mjs";

function placeOf(frame) {
  const url = frame.url ?? "";
  if (url === "") return `native ${frame.functionName || "(anonymous)"}`;
  const ours = /session-context\/dist\/(.+)\.js$/.exec(url);
  if (ours) return `core ${ours[1]}`;
  if (url.startsWith("node:")) return url;
  const dependency = /.*node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return `dep ${dependency[1]}`;
  return url.split("/").slice(-2).join("/");
}

/** Sums a .cpuprofile's self time per place and per function. */
export function summariseProfile(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map();
  for (let index = 0; index < profile.samples.length; index += 1) {
    const delta = profile.timeDeltas[index] ?? 0;
    selfMicros.set(profile.samples[index], (selfMicros.get(profile.samples[index]) ?? 0) + delta);
  }
  const places = new Map();
  const functions = new Map();
  let total = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id).callFrame;
    total += micros;
    const place = placeOf(frame);
    places.set(place, (places.get(place) ?? 0) + micros);
    const name = `${frame.functionName || "(anonymous)"} ${place}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const top = (map, count) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / total }));
  return { totalMs: total / 1000, places: top(places, 30), functions: top(functions, 30) };
}

/** Profiles `turns` turns of each variant (after `warm`), one child each. */
export async function runProfileWorkload({ variants, server, warm, turns, keep, log }) {
  const rows = [];
  for (const variant of variants) {
    const dir = scratchFolder(`profile-${variant.id}`);
    const profiles = scratchFolder(`cpuprof-${variant.id}`);
    try {
      const env = { PEER_BENCH_BASE_URL: server.baseUrl, PEER_BENCH_DIR: dir.path, PEER_BENCH_PG_URL: "" };
      const file = join(profiles.path, "turns.cpuprofile");
      const result = await runChild({
        variant: variant.id,
        mode: "turns",
        options: { warm, turns, session: "s_profile", profile: file },
        env,
      });
      const summary = summariseProfile(JSON.parse(readFileSync(file, "utf8")));
      // Kept for a closer look (DevTools, or a caller breakdown) when asked: the scratch copy goes with its folder.
      if (keep) {
        mkdirSync(keep, { recursive: true });
        copyFileSync(file, join(keep, `${variant.id}-${turns}-turns.cpuprofile`));
      }
      rows.push({
        id: variant.id,
        turns,
        cpuMsPerTurn: result.cpuMsPerTurn,
        times: result.times,
        summary,
        load: loadavg()[0],
      });
      log(
        `${variant.id}: ${result.cpuMsPerTurn.toFixed(2)} ms CPU per turn; top: ${summary.places
          .slice(0, 6)
          .map((p) => `${p.name} ${(p.share * 100).toFixed(0)}%`)
          .join(", ")}`,
      );
    } finally {
      dir.remove();
      profiles.remove();
    }
  }
  return rows;
}
