// `pnpm bench` for the core: store (issue 2), context (issue 3) and replay (issue 14) figures.
import { benchContext } from "./context.js";
import { benchReplay } from "./replay.js";
import { benchStore } from "./store.js";

process.stdout.write("@openprogram/session-context benchmarks (medians)\n");
await benchStore();
await benchContext();
await benchReplay();
