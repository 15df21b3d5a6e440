// A child process that joins its parent's turn through the environment carrier
// and runs the trip program there: when the parent's turn resumes an
// interrupted one, the child replays its part of the record.
import { sessionContext } from "../../src/index.js";
import { createRuntime } from "../../src/entries/runtime.js";
import { planTrip } from "../programs/trip.mjs";

const input = JSON.parse(process.argv[2] ?? "{}") as { destination: string; days: number };
const runtime = createRuntime({
  provider: "openai",
  baseUrl: process.env.TEST_OPENAI_BASE_URL ?? "",
  model: "m",
  maxRetries: 0,
});
const result = await sessionContext({ runtime, asker: null, source: "process" }, () => planTrip(input));
process.stdout.write(`${JSON.stringify(result)}\n`);
