// A turn with many writes spread over time, for killing at random points:
// nested calls, model requests (the scripted provider waits a little before
// each reply), and a final result.
import { agenticFunction } from "@openprogram/session-context";

const step = agenticFunction({ name: "step", doc: "Do one step of the work." }, async ({ index }, { runtime }) =>
  runtime.exec(`Step ${index}`),
);

export const work = agenticFunction({ name: "work", doc: "Do the work in steps." }, async ({ steps }) => {
  const results = [];
  for (let index = 0; index < steps; index++) results.push(await step({ index }));
  return results.length;
});
