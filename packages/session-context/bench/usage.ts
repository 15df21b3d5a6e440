// Usage benchmark (issue 18): `sessions usage` over a store of 1,000 sessions, beside a full scan of every node
// file in the same run (what adding usage up would cost without the per-session totals and the store cache).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report } from "@openprogram/bench-kit";
import type { SessionNode } from "../src/index.js";
import { openStore } from "../src/entries/store.js";
import { llmNodeUsage, usageAcrossStore } from "../src/entries/usage.js";
import { USAGE_CACHE_FILE } from "../src/store/usage-cache.js";
import { addCall, emptyCounts, type UsageCounts } from "../src/usage/usage-counts.js";
import { buildUsageStore } from "./usage-store.js";

const PACKAGE = "@openprogram/session-context";
const SESSIONS = 1000;
const NO_PRICES = { prices: {}, source: "none", path: null };

export async function benchUsage(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), "openprogram-bench-usage-"));
  try {
    const root = join(home, "sessions");
    // Realistic: nearly every session's total is current (2 of 1,000 without one, as a crash or a Python turn leaves).
    await buildUsageStore(root, SESSIONS, { staleEvery: 1000 });
    const db = openStore({ root });
    const files = countNodeFiles(root);
    await usageAcrossStore({ db, prices: NO_PRICES }); // brings the store cache up to date, as a first query does
    const count = iterations(40);
    const ours: number[] = [];
    const uncached: number[] = [];
    const scan: number[] = [];
    // Alternated so the machine's noise hits them alike.
    for (let round = 0; round < count; round++) {
      let started = performance.now();
      const result = await usageAcrossStore({ db, prices: NO_PRICES });
      ours.push(performance.now() - started);
      started = performance.now();
      const scanned = scanNodeFiles(root);
      scan.push(performance.now() - started);
      if (scanned.calls !== result.total.calls) throw new Error("the scan and sessions usage disagree");
      rmSync(join(root, USAGE_CACHE_FILE), { force: true });
      started = performance.now();
      await usageAcrossStore({ db, prices: NO_PRICES });
      uncached.push(performance.now() - started);
    }
    const scanMedian = median(scan);
    const oursMedian = median(ours);
    report({
      package: PACKAGE,
      metric: `sessions usage over ${SESSIONS.toLocaleString("en-US")} sessions (usageAcrossStore: index, store cache, a stat per session)`,
      unit: "ms",
      median: oursMedian,
      baseline: scanMedian,
      baselineLabel: `full scan: read and parse all ${files.toLocaleString("en-US")} node files`,
      target: "<= 100 ms",
      met: oursMedian <= 100,
      samples: count,
    });
    report({
      package: PACKAGE,
      metric: "the same with no store cache (each session's usage.json read, the cache written again)",
      unit: "ms",
      median: median(uncached),
      baseline: scanMedian,
      baselineLabel: "the full scan",
      samples: count,
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function countNodeFiles(root: string): number {
  let files = 0;
  for (const session of readdirSync(root, { withFileTypes: true }))
    if (session.isDirectory()) files += readdirSync(join(root, session.name, "history")).length;
  return files;
}

/** Every node file read and parsed, and its model call added up: the baseline. */
function scanNodeFiles(root: string): UsageCounts {
  const total = emptyCounts();
  for (const session of readdirSync(root, { withFileTypes: true })) {
    if (!session.isDirectory()) continue;
    const history = join(root, session.name, "history");
    for (const file of readdirSync(history)) {
      const call = llmNodeUsage(JSON.parse(readFileSync(join(history, file), "utf8")) as SessionNode);
      if (call) addCall(total, call);
    }
  }
  return total;
}
