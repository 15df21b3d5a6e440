// A child process that runs the describe-image program (an exec with an image and
// a schema) as one turn of a session; the test kills it with SIGKILL mid-turn.
import { sessionContext } from "../../src/index.js";
import { createRuntime } from "../../src/entries/runtime.js";
import { moduleProgramRef } from "../../src/entries/turns.js";
import { describeImage } from "../programs/describe-image.mjs";

const [sessionId, path] = process.argv.slice(2) as [string, string];
const runtime = createRuntime({
  provider: "openai",
  baseUrl: process.env.TEST_OPENAI_BASE_URL ?? "",
  model: "m",
  maxRetries: 0,
});
const program = {
  ref: moduleProgramRef(new URL("../programs/describe-image.mjs", import.meta.url).pathname, "describeImage"),
  input: { path },
};
const result = await sessionContext({ sessionId, runtime, program, source: "process" }, () => describeImage({ path }));
process.stdout.write(`${JSON.stringify(result)}\n`);
