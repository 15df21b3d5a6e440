// A turn for killing while it waits on a question, or around it: model
// calls (one nested in a helper) before the question and after it.
import { agenticFunction, askUser } from "@openprogram/session-context";

const gatherNotes = agenticFunction(
  { name: "gather_notes", doc: "Gather travel notes on the destination." },
  async ({ destination }, { runtime }) => {
    const draft = await runtime.exec(`Notes on ${destination}.`);
    return runtime.exec(`Shorten these notes:\n${draft}`);
  },
);

export const planTrip = agenticFunction(
  { name: "plan_trip", doc: "Suggest a destination, gather notes, ask for a style, plan and check the trip." },
  async ({ region }, { runtime }) => {
    const destination = await runtime.exec(`Suggest a destination in ${region}.`);
    const notes = await gatherNotes({ destination });
    const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort"] });
    const plan = await runtime.exec(`Plan a ${style} trip to ${destination}.\n${notes}`);
    const check = await runtime.exec(`Check this plan:\n${plan}`);
    return { destination, style, plan, check };
  },
);
