// A model call, a question, a model call: the resume tests stop the child at its question.
import { agenticFunction, askUser } from "@openprogram/session-context";

/** Suggests a destination, asks for a style, plans the trip. */
export const pickDestination = agenticFunction(
  { name: "pick_destination", doc: "Suggest a destination, ask for a style, plan the trip." },
  async ({ region }: { region: string }, { runtime }) => {
    const destination = await runtime.exec(`Suggest a destination in ${region}.`);
    const style = await askUser(`Which style of trip to ${destination}?`, { choices: ["budget", "comfort"] });
    const plan = await runtime.exec(`Plan a ${style} trip to ${destination}.`);
    return { destination, style, plan };
  },
);
