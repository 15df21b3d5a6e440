// This project's side of the agent turn: one agentic function whose body makes
// the four model calls with runtime.exec. Each exec is recorded as an llm node
// under the call's code node (appended running, updated when the reply ends);
// the turn is one git commit. A module of its own so a resumed turn finds the
// program again by the ref its first run recorded.
import { fileURLToPath } from "node:url";
import { AGENT_DOC, STEPS, stepPrompt } from "../lib/agent-turn.mjs";
import { LOOKUP_TOOL, lookupFact } from "../lib/tool-turn.mjs";
import { core } from "../lib/workspace.mjs";

// Imported with `?dist=<path>` by the openprogram-alt variant: this module then runs on that build of the core.
const { agenticFunction, moduleProgramRef, tool } = await core(
  new URL(import.meta.url).searchParams.get("dist") ?? undefined,
);

/** The agent turn: four execs in sequence, each seeing the earlier ones (runtime.exec renders them). */
export const agentTurn = agenticFunction(
  { name: "agent_turn", doc: AGENT_DOC, expose: "hidden" },
  async ({ session, turn }, { runtime }) => {
    const replies = [];
    for (let step = 1; step <= STEPS; step += 1) replies.push(await runtime.exec(stepPrompt(session, turn, step)));
    return replies;
  },
);

/** How a turn names this program, so resumeTurn can load it again in another process. */
export const AGENT_TURN_REF = moduleProgramRef(fileURLToPath(import.meta.url), "agentTurn");

/** The tool every peer offers, as a plain tool: the same JSON Schema, the same function. */
const lookupTool = tool({
  name: LOOKUP_TOOL.name,
  description: LOOKUP_TOOL.description,
  input: LOOKUP_TOOL.parameters,
  execute: (args) => lookupFact(args),
});

/**
 * The tool turn: four execs, each a tool loop (the call asking for the tool, the
 * tool recorded as a code node, the call reading its result).
 */
export const agentToolTurn = agenticFunction(
  { name: "agent_tool_turn", doc: AGENT_DOC, expose: "hidden" },
  async ({ session, turn }, { runtime }) => {
    const replies = [];
    for (let step = 1; step <= STEPS; step += 1)
      replies.push(await runtime.exec(stepPrompt(session, turn, step), { tools: [lookupTool] }));
    return replies;
  },
);

/** How a tool turn names this program. */
export const AGENT_TOOL_TURN_REF = moduleProgramRef(fileURLToPath(import.meta.url), "agentToolTurn");
