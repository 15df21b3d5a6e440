// Resume: a turn killed with SIGKILL (a real child process) while its step 4
// is in flight, i.e. after step 3 finished, then resumed in a new process.
// The fake server counts every step request per session, so the figures are
// how many of the finished steps (1-3) the resume asked the model for again,
// and how long the resume took (in the resuming process, from its resume
// call to the turn's end; and the new process's whole life).
import { performance } from "node:perf_hooks";
import { loadavg } from "node:os";
import { createPgDatabase, scratchFolder } from "../lib/environment.mjs";
import { spawnChild, runChild } from "../lib/spawn-child.mjs";
import { rotated } from "../lib/open-variants.mjs";

/** Runs `repeats` kill-and-resume cycles per variant, alternating. */
export async function runResumeWorkload({ variants, server, repeats, log }) {
  const rows = new Map(
    // A variant that records nothing to resume from (the bare SDK, the layout's floor) has no resume to measure.
    variants.filter((variant) => variant.resumes !== false).map((variant) => [variant.id, { variant, cycles: [] }]),
  );
  const entries = [...rows.values()];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    for (const entry of rotated(entries, repeat)) {
      const { variant } = entry;
      const dir = scratchFolder(`resume-${variant.id}`);
      const database = variant.id.includes("-pg") ? await createPgDatabase() : null;
      const env = {
        PEER_BENCH_BASE_URL: server.baseUrl,
        PEER_BENCH_DIR: dir.path,
        PEER_BENCH_PG_URL: database?.url ?? "",
      };
      const session = `kill-${repeat}`;
      const counts = { first: [0, 0, 0, 0, 0], resume: [0, 0, 0, 0, 0] };
      let phase = "first";
      let killed = false;
      const { child, done } = spawnChild({ variant: variant.id, mode: "run", options: { session, turn: 1 }, env });
      const stop = server.onRequest((request) => {
        if (request.session !== session) return;
        counts[phase][request.step] += 1;
        if (phase === "first" && request.step === 4 && !killed) {
          killed = true;
          child.kill("SIGKILL");
        }
      });
      try {
        const first = await done;
        if (first.signal !== "SIGKILL")
          throw new Error(`${variant.id}: the turn was not killed (exit ${first.code}): ${first.stderr.slice(-1500)}`);
        phase = "resume";
        const started = performance.now();
        const resumed = await runChild({ variant: variant.id, mode: "resume", options: { session, turn: 1 }, env });
        const processMs = performance.now() - started;
        const repeated = counts.resume[1] + counts.resume[2] + counts.resume[3];
        entry.cycles.push({
          repeated,
          step4Requests: counts.resume[4],
          resumeMs: resumed.resumeMs,
          openMs: resumed.openMs,
          processMs,
          steps: resumed.steps,
          counts,
          load: loadavg()[0],
        });
        log(
          `${variant.id}: repeated ${repeated} of steps 1-3, step 4 sent ${counts.resume[4]}x, resume ${resumed.resumeMs.toFixed(1)} ms (process ${processMs.toFixed(0)} ms)`,
        );
      } catch (error) {
        entry.cycles.push({ error: String(error.message ?? error).slice(0, 600) });
        log(`${variant.id}: FAILED ${String(error.message ?? error).slice(0, 300)}`);
      } finally {
        stop();
        dir.remove();
        await database?.drop();
      }
    }
  }
  return entries.map(({ variant, cycles }) => ({
    id: variant.id,
    peer: variant.peer,
    durability: variant.durability,
    cycles,
  }));
}
