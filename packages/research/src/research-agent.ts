import {
  agenticFunction,
  AskUserUnavailableError,
  currentAsker,
  currentRuntime,
  currentSession,
  RuntimeMissingError,
} from "@openprogram/session-context";
import { ArtifactWriter } from "./artifacts/artifact-writer.js";
import { RecordedArtifacts } from "./artifacts/recorded-artifacts.js";
import { runPipeline } from "./pipeline.js";
import { resolveSections } from "./sections.js";
import { CHOOSE_IDEA_QUESTION } from "./stages/choose-idea.js";
import { researchInputSchema } from "./input-schema.js";
import type { ResearchResult } from "./types.js";
import { validateResearchRequest } from "./validate-request.js";
import { checkOutsideStore, resolveWorkDir } from "./work-dir.js";

/** What research_agent does; it passes data between the stages, whose own docs hold the instructions. */
export const RESEARCH_AGENT_DOC = `Runs a research project from a task to a reviewed paper draft, one stage at a time: survey_literature (a literature review from the model's knowledge, marked unverified), propose_ideas (ranked), choose_idea (asks the user when the run is interactive, else takes the top-ranked idea), design_experiments, write_section for each section, review_paper, and revise_paper when the review asks for it. Each stage is an agentic function with its own instructions; this function only passes data between them and writes their results as Markdown files into the work dir. It returns the stages' results, the files written and a summary; if the user declines to choose an idea it stops there and says so.`;

/**
 * research_agent: the whole pipeline, as one agentic call with the stages
 * under it. Exposed to later runs by its output only: the input holds the
 * work dir, the output holds no path, so what the model sees of earlier runs
 * never depends on where they wrote.
 */
export const researchAgent = agenticFunction(
  { name: "research_agent", doc: RESEARCH_AGENT_DOC, expose: "output", input: researchInputSchema },
  async (input, { sessionId }): Promise<ResearchResult> => {
    validateResearchRequest(input.task, {
      workDir: input.workDir ?? resolveWorkDir(undefined, sessionId),
      sections: input.sections,
      interactive: input.interactive,
    });
    const workDir = resolveWorkDir(input.workDir, sessionId);
    checkOutsideStore(workDir, currentSession().sessionsRoot);
    if (currentRuntime() === null) throw new RuntimeMissingError("the research stages call the model");
    if (input.interactive && currentAsker() === null) throw new AskUserUnavailableError(CHOOSE_IDEA_QUESTION);
    const request = {
      task: input.task,
      sections: resolveSections(input.sections),
      interactive: input.interactive === true,
    };
    return runPipeline(request, new RecordedArtifacts(new ArtifactWriter(workDir)));
  },
);
