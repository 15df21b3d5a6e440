// The bare OpenAI SDK: the same four calls, nothing recorded. The lower bound
// of what the turn's model calls cost.
import OpenAI from "openai";
import { STEPS, stepMessages, stepPrompt, streamChat } from "../lib/agent-turn.mjs";
import { runToolStep } from "../lib/tool-turn.mjs";

/** The bare SDK's one variant. */
export function bareVariants() {
  return [
    {
      id: "bare-sdk",
      peer: "bare OpenAI SDK",
      durability: "none",
      setting: "no record",
      resumes: false,
      open: openBare,
    },
  ];
}

async function openBare({ baseUrl }) {
  const client = new OpenAI({ baseURL: baseUrl, apiKey: "bench" });
  return {
    async runTurn(session, turn) {
      const steps = [];
      for (let step = 1; step <= STEPS; step += 1) {
        const reply = await streamChat(client, stepMessages(session, turn, step, steps));
        steps.push({ prompt: stepPrompt(session, turn, step), reply });
      }
      return steps.map((done) => done.reply);
    },
    /** The tool turn: per step, the call asking for the tool, the tool, the call that answers; nothing recorded. */
    async runToolTurn(session, turn) {
      const steps = [];
      for (let step = 1; step <= STEPS; step += 1) steps.push(await runToolStep(client, session, turn, step, steps));
      return steps.map((done) => done.answer);
    },
    async close() {},
  };
}
