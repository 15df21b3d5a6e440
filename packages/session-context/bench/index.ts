// `pnpm bench` for the core: store (issue 2), context (issue 3), replay (issue 14), tracing and usage (issue 18),
// prune and compaction (issue 16) figures.
import { benchCompaction } from "./compaction.js";
import { benchContext } from "./context.js";
import { benchPrune } from "./prune.js";
import { benchReplay } from "./replay.js";
import { benchStore } from "./store.js";
import { benchTracing } from "./tracing.js";
import { benchUsage } from "./usage.js";

process.stdout.write("@openprogram/session-context benchmarks (medians)\n");
await benchStore();
await benchContext();
await benchReplay();
await benchTracing();
await benchUsage();
await benchPrune();
await benchCompaction();
