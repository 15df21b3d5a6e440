// Nested agentic functions that call the model: the attribution, parity and event tests run them in-process and in a child.
import { agenticFunction } from "@openprogram/session-context";

/** A nested call with its own exec. */
export const summarise = agenticFunction(
  { name: "summarise", doc: "Summarise the topic in one sentence for a research plan." },
  async ({ topic }: { topic: string }, { runtime }) => runtime.exec(`Topic: ${topic}`),
);

/** Calls summarise, then the model with the summary in its history. */
export const outline = agenticFunction(
  { name: "outline", doc: "Write a three-point outline of the topic. Use the summary you were given." },
  async ({ topic }: { topic: string }, { runtime }) => {
    const summary = await summarise({ topic });
    const text = await runtime.exec(`Outline the topic ${topic}.`);
    return { summary, text };
  },
);
