// The 4-step agent turn, one session per variant, in alternating rounds:
// each round runs `turns` turns of every variant, in a rotated order, so
// drift in the machine hits every variant alike. Per-turn wall time and the
// process's CPU per turn (the fake server runs in another process).
import { performance } from "node:perf_hooks";
import { loadavg } from "node:os";
import { openVariants, rotated } from "../lib/open-variants.mjs";

/** Runs the workload; returns one row per variant. */
export async function runTurnWorkload({ variants, baseUrl, rounds, turns, warm, log, method = "runTurn" }) {
  // closeAll closes every variant opened, those left out too (their scratch folders with them).
  const { opened: all, closeAll } = await openVariants(variants, baseUrl);
  const opened = all.filter((entry) => typeof entry.handle[method] === "function");
  const unsupported = all.filter((entry) => !opened.includes(entry)).map((entry) => entry.variant.id);
  if (unsupported.length > 0) log(`${unsupported.join(", ")}: no ${method}; left out`);
  const samples = new Map(opened.map((entry) => [entry.variant.id, { times: [], cpuMs: 0, turn: 0 }]));
  const loads = [];
  try {
    for (const entry of opened) {
      const sample = samples.get(entry.variant.id);
      for (let index = 0; index < warm; index += 1) await entry.handle[method]("s_turns", ++sample.turn);
    }
    for (let round = 0; round < rounds; round += 1) {
      loads.push(loadavg()[0]);
      for (const entry of rotated(opened, round)) {
        const sample = samples.get(entry.variant.id);
        const cpuBefore = process.cpuUsage();
        for (let index = 0; index < turns; index += 1) {
          const started = performance.now();
          await entry.handle[method]("s_turns", ++sample.turn);
          sample.times.push(performance.now() - started);
        }
        const cpu = process.cpuUsage(cpuBefore);
        sample.cpuMs += (cpu.user + cpu.system) / 1000;
      }
      log(`round ${round + 1}/${rounds} done, load ${loadavg()[0].toFixed(2)}`);
    }
  } finally {
    await closeAll();
  }
  return opened.map(({ variant, settings }) => {
    const sample = samples.get(variant.id);
    return {
      id: variant.id,
      peer: variant.peer,
      durability: variant.durability,
      setting: variant.setting,
      settings,
      times: sample.times,
      cpuMsPerTurn: sample.cpuMs / sample.times.length,
      loads,
    };
  });
}

/**
 * 50 sessions x 20 turns at once per variant, the variants one after another
 * in alternating rounds: throughput (turns per second of wall time) and each
 * turn's latency.
 */
export async function runConcurrentWorkload({ variants, baseUrl, rounds, sessions, turns, log }) {
  const { opened, closeAll } = await openVariants(variants, baseUrl);
  const samples = new Map(
    opened.map((entry) => [entry.variant.id, { times: [], throughputs: [], cpuMs: 0, turns: 0, loopBusy: [] }]),
  );
  const loads = [];
  try {
    for (let round = 0; round < rounds; round += 1) {
      loads.push(loadavg()[0]);
      for (const entry of rotated(opened, round)) {
        const sample = samples.get(entry.variant.id);
        const cpuBefore = process.cpuUsage();
        const loopBefore = performance.eventLoopUtilization();
        const started = performance.now();
        await Promise.all(
          Array.from({ length: sessions }, async (_, index) => {
            const session = `c${round}_${String(index).padStart(3, "0")}`;
            for (let turn = 1; turn <= turns; turn += 1) {
              const turnStarted = performance.now();
              await entry.handle.runTurn(session, turn);
              sample.times.push(performance.now() - turnStarted);
            }
          }),
        );
        const seconds = (performance.now() - started) / 1000;
        const cpu = process.cpuUsage(cpuBefore);
        // How much of the round the event loop's thread was busy: near 1, that thread is what limits the rate.
        sample.loopBusy.push(performance.eventLoopUtilization(loopBefore).utilization);
        sample.cpuMs += (cpu.user + cpu.system) / 1000;
        sample.turns += sessions * turns;
        sample.throughputs.push((sessions * turns) / seconds);
        log(
          `round ${round + 1}/${rounds} ${entry.variant.id}: ${((sessions * turns) / seconds).toFixed(1)} turns/s, load ${loadavg()[0].toFixed(2)}`,
        );
      }
    }
  } finally {
    await closeAll();
  }
  return opened.map(({ variant, settings }) => {
    const sample = samples.get(variant.id);
    return {
      id: variant.id,
      peer: variant.peer,
      durability: variant.durability,
      setting: variant.setting,
      settings,
      times: sample.times,
      throughputs: sample.throughputs,
      cpuMsPerTurn: sample.cpuMs / sample.turns,
      loopBusy: sample.loopBusy,
      loads,
    };
  });
}
