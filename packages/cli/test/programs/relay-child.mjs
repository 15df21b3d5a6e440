// The child half of relay-parent.mjs: two model calls in a child process.
import { agenticFunction } from "@openprogram/session-context";

export const childSteps = agenticFunction(
  { name: "childSteps", doc: "Answer in a few words." },
  async ({ topic }, { runtime }) => [
    await runtime.exec(`child one: ${topic}`),
    await runtime.exec(`child two: ${topic}`),
  ],
);
