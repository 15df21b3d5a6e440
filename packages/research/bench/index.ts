// `pnpm bench` for the research harness: a full run, artifact writes and a resumed run, each beside a same-run baseline.
import { benchArtifacts } from "./artifacts.js";
import { benchPipeline } from "./pipeline.js";
import { benchResume } from "./resume.js";

process.stdout.write("@openprogram/research benchmarks (medians)\n");
await benchPipeline();
await benchArtifacts();
await benchResume();
