// Retention (issue 16): `pruneSessions({ dryRun: true })` over 10,000
// sessions (target: at most 1 s), beside listing the same store in the same
// run (a new SessionDB each time: index.json read and parsed, every entry).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, median, report, sample } from "@openprogram/bench-kit";
import { pruneSessions, SessionDB } from "../src/entries/store.js";
import { seedPruneStore } from "./prune-store.js";

const PACKAGE = "@openprogram/session-context";
const SESSIONS = 10_000;
const TARGET_MS = 1000;

export async function benchPrune(): Promise<void> {
  const home = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "openprogram-bench-prune-"));
  try {
    const root = join(home, "sessions");
    const named = seedPruneStore(root, SESSIONS);
    const rounds = iterations(10);
    const listing = await sample(
      async () => {
        const listed = await new SessionDB({ root }).listSessions({ includeArchived: true });
        if (listed.length !== SESSIONS) throw new Error(`listed ${listed.length} sessions`);
      },
      { iterations: rounds, warmup: 2 },
    );
    const pruning = await sample(
      async () => {
        const report = await pruneSessions({ db: new SessionDB({ root }), dryRun: true });
        if (report.removed.length !== named) throw new Error(`prune named ${report.removed.length}, not ${named}`);
      },
      { iterations: rounds, warmup: 2 },
    );
    const baseline = median(listing);
    const figure = median(pruning);
    report({
      package: PACKAGE,
      metric: `sessions prune --dry-run over ${SESSIONS.toLocaleString("en")} sessions (${named} to remove; in the core)`,
      unit: "ms",
      median: figure,
      baseline,
      baselineLabel: `(list the same ${SESSIONS.toLocaleString("en")} sessions, new SessionDB)`,
      target: `<= ${TARGET_MS} ms`,
      met: figure <= TARGET_MS,
      samples: rounds,
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
