// A child process that runs the tool-day program as one turn of a session, and
// dies with SIGKILL where the test says: $OPENPROGRAM_TEST_DIE_IN (inside a tool,
// see tool-day.mjs), $OPENPROGRAM_TEST_DIE_AFTER (once a tool's result is
// recorded, before the next model request), or $OPENPROGRAM_TEST_DIE_ASKING=1
// (while the approval question waits). Otherwise approvals are answered yes. With $OPENPROGRAM_TEST_AT_ONCE=1 it
// runs planDayAtOnce (two tool calls in one reply, run concurrently).
import { sessionContext, type Asker } from "../../src/index.js";
import { createScriptedAsker } from "../../src/entries/host.js";
import { createRuntime } from "../../src/entries/runtime.js";
import { moduleProgramRef } from "../../src/entries/turns.js";
import { planDay, planDayAtOnce } from "../programs/tool-day.mjs";

const [sessionId, city] = process.argv.slice(2) as [string, string];
const runtime = createRuntime({
  provider: "openai",
  baseUrl: process.env.TEST_OPENAI_BASE_URL ?? "",
  model: "m",
  maxRetries: 0,
});
const dieAfter = process.env.OPENPROGRAM_TEST_DIE_AFTER;
const asker: Asker =
  process.env.OPENPROGRAM_TEST_DIE_ASKING === "1"
    ? { ask: () => new Promise<never>(() => process.kill(process.pid, "SIGKILL")) }
    : createScriptedAsker(["yes"]);
const atOnce = process.env.OPENPROGRAM_TEST_AT_ONCE === "1";
const program = {
  ref: moduleProgramRef(
    new URL("../programs/tool-day.mjs", import.meta.url).pathname,
    atOnce ? "planDayAtOnce" : "planDay",
  ),
  input: { city },
};
const result = await sessionContext(
  {
    sessionId,
    runtime,
    asker,
    program,
    source: "process",
    onEvent: (event) => {
      if (event.type === "tool_result" && event.name === dieAfter) process.kill(process.pid, "SIGKILL");
    },
  },
  () => (atOnce ? planDayAtOnce : planDay)({ city }),
);
process.stdout.write(`${JSON.stringify(result)}\n`);
