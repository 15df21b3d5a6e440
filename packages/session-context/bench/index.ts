// `pnpm bench` for the core: store (issue 2) and context (issue 3) figures.
import { benchContext } from "./context.js";
import { benchStore } from "./store.js";

process.stdout.write("@openprogram/session-context benchmarks (medians)\n");
await benchStore();
await benchContext();
