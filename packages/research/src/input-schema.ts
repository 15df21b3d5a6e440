import { z } from "zod";
import type { ResearchInput } from "./types.js";

/**
 * research_agent's input, checked before the call records anything (and shown
 * as the web page's run form). The deeper checks (a writable work dir, known
 * sections) stay in validateResearchRequest, which runs first in the body.
 */
export const researchInputSchema: z.ZodType<ResearchInput> = z.object({
  task: z
    .string({ error: "the research task must be a string: say what to research" })
    .regex(/\S/, "the research task must not be empty: say what to research")
    .describe("what to research, in plain words"),
  workDir: z.string().min(1).optional().describe("where the artifacts go (default ./research/<session id>)"),
  interactive: z.boolean().optional().describe("ask you to choose the idea"),
  sections: z.array(z.string()).optional().describe("the paper's sections, in order"),
});
