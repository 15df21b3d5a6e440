// A program for the web resume tests: a model call, a question, a model call.
import { agenticFunction, askUser } from "@openprogram/session-context";

export const pickDestination = agenticFunction(
  { name: "pick_destination", doc: "Suggest a destination, ask for a style, plan the trip." },
  async ({ region }, { runtime }) => {
    const destination = await runtime.exec(`Suggest a destination in ${region}.`);
    const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort"] });
    const plan = await runtime.exec(`Plan a ${style} trip to ${destination}.`);
    return { destination, style, plan };
  },
);
