// Runs the trip program in session argv[2] of the store under OPENPROGRAM_HOME, against the
// OpenAI-compatible server at TEST_OPENAI_BASE_URL, answering its question "comfort". The
// streaming crash test kills it with SIGKILL while a reply streams.
import { fileURLToPath } from "node:url";
import { sessionContext } from "../../src/index.js";
import { createRuntime } from "../../src/entries/runtime.js";
import { moduleProgramRef } from "../../src/entries/turns.js";
import { createScriptedAsker } from "../../src/testing/index.js";
import { planTrip } from "../programs/trip.mjs";

const module = fileURLToPath(new URL("../programs/trip.mjs", import.meta.url));
const input = { destination: "Lisbon", days: 3 };
const runtime = createRuntime({
  provider: "openai",
  baseUrl: process.env.TEST_OPENAI_BASE_URL ?? "",
  model: "m",
  maxRetries: 0,
});
await sessionContext(
  {
    sessionId: process.argv[2] ?? "",
    runtime,
    asker: createScriptedAsker(["comfort"]),
    program: { ref: moduleProgramRef(module, "planTrip"), input },
    source: "test",
  },
  () => planTrip(input),
);
