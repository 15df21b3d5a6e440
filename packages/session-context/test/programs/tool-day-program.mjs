// The tool-day program, made from a copy of the core: one exec whose model
// calls three tools in turn (an idempotent lookup, a booking that needs
// approval and must not run twice, an agentic function with two model calls of
// its own), then answers. Each execution appends its name to
// $OPENPROGRAM_TEST_TOOL_LOG, so a test counts executions across processes;
// $OPENPROGRAM_TEST_DIE_IN names a tool inside which the process kills itself
// with SIGKILL (for the agentic one: between its two model calls), as a crash
// would. `planDayAtOnce` asks for the weather and the shout in one reply,
// run concurrently (parallelToolCalls). The core is a parameter because the program's two copies load
// different ones: test/programs/tool-day.mjs the core's sources (a tsx child
// loads the same code as the test), packages/cli/test/programs/tool-day.mjs
// the built package (as the CLI loads a user's program).
import { appendFileSync } from "node:fs";

function executed(name) {
  const log = process.env.OPENPROGRAM_TEST_TOOL_LOG;
  if (log) appendFileSync(log, `${name}\n`);
  if (process.env.OPENPROGRAM_TEST_DIE_IN === name) process.kill(process.pid, "SIGKILL");
}

/** The program's tools and its entry, `planDay`, built with `core`'s agenticFunction and tool. */
export function toolDayProgram({ agenticFunction, tool }) {
  const weather = tool({
    name: "weather",
    description: "The weather in a city today.",
    input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    idempotent: true,
    execute: ({ city }) => {
      executed("weather");
      return { city, sky: "snow" };
    },
  });

  const bookRoom = tool({
    name: "book_room",
    description: "Book a hotel room in a city for tonight.",
    input: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    needsApproval: true,
    execute: ({ city }) => {
      executed("book_room");
      return { city, booking: "R-1" };
    },
  });

  const shout = agenticFunction(
    { name: "shout", doc: "Say the text back in capitals, then shorten it." },
    async ({ text }, { runtime }) => {
      const loud = await runtime.exec(`Text: ${text}`);
      executed("shout");
      return runtime.exec(`Shorten: ${loud}`);
    },
  );

  const planDay = agenticFunction(
    { name: "plan_day", doc: "Plan the day. Use the tools when they help." },
    async ({ city }, { runtime }) =>
      runtime.exec(`Plan my day in ${city}.`, { tools: [weather, bookRoom, shout], parallelToolCalls: false }),
  );

  const planDayAtOnce = agenticFunction(
    { name: "plan_day_at_once", doc: "Plan the day. Use the tools when they help." },
    async ({ city }, { runtime }) =>
      runtime.exec(`Plan my day in ${city}, asking for what you need at once.`, {
        tools: [weather, shout],
        parallelToolCalls: true,
      }),
  );

  return { weather, bookRoom, shout, planDay, planDayAtOnce };
}
