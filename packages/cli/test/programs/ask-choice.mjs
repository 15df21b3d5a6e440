import { agenticFunction, askUser } from "@openprogram/session-context";

export const pickColour = agenticFunction({ name: "pick_colour", doc: "Ask which colour to use." }, async () => {
  const colour = await askUser("Which colour should the chart use?", { choices: ["red", "green", "blue"] });
  return `chart in ${colour}`;
});
