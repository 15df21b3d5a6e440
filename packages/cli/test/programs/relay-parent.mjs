// A program whose middle step runs in a child process (the process runner): parent, child, child, parent.
import { fileURLToPath } from "node:url";
import { agenticFunction } from "@openprogram/session-context";
import { runInChild } from "@openprogram/process-runner";

const CHILD = fileURLToPath(new URL("./relay-child.mjs", import.meta.url));

export const relay = agenticFunction(
  { name: "relay", doc: "Answer in a few words." },
  async ({ topic }, { runtime }) => {
    const first = await runtime.exec(`parent first: ${topic}`);
    const middle = await runInChild({ module: CHILD, export: "childSteps", input: { topic } });
    const last = await runtime.exec(`parent last: ${topic}`);
    return [first, ...middle, last].join(" | ");
  },
);
