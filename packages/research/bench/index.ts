// `pnpm bench` for the research harness: a full run and artifact writes, each beside a same-run baseline.
import { benchArtifacts } from "./artifacts.js";
import { benchPipeline } from "./pipeline.js";

process.stdout.write("@openprogram/research benchmarks (medians)\n");
await benchPipeline();
await benchArtifacts();
