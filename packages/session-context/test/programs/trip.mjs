// A program for the resume tests: a question, a caught failure, nested model
// calls and a final one, like the parity suite's reference program.
// Imported from the sources, so that a child process (tsx) loads the same code as the test.
import { agenticFunction, askUser } from "../../src/index.js";

export const lookUpVisa = agenticFunction(
  { name: "look_up_visa", doc: "Look up the visa rules for the destination." },
  async ({ destination }) => {
    throw new Error(`no visa data for ${destination}`);
  },
);

export const summarizeOptions = agenticFunction(
  { name: "summarize_options", doc: "Summarise the travel options in three bullet points." },
  async ({ notes }, { runtime }) => {
    const draft = await runtime.exec(`Notes:\n${notes}`);
    return runtime.exec(`Shorten:\n${draft}`);
  },
);

export const planTrip = agenticFunction(
  { name: "plan_trip", doc: "Plan a short trip for the user." },
  async ({ destination, days }, { runtime }) => {
    const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort", "luxury"] });
    let visa;
    try {
      visa = await lookUpVisa({ destination });
    } catch (error) {
      visa = `visa lookup failed: ${error.message}`;
    }
    const summary = await summarizeOptions({ notes: `${destination}, ${days} days, ${style}; ${visa}` });
    const plan = await runtime.exec(`Destination: ${destination}\nStyle: ${style}\nOptions:\n${summary}`);
    return { plan, style };
  },
);
