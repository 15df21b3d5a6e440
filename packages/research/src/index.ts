// @openprogram/research: the research harness. Entry file: wiring only.

export { runResearch, type RunResearchOptions, type RunResearchResult } from "./run-research.js";
export { researchAgent, RESEARCH_AGENT_DOC } from "./research-agent.js";
export { researchProgram, type ResearchProgramOptions } from "./network-program.js";
export * from "./stages/index.js";
export { validateResearchRequest, type ResearchRequestOptions } from "./validate-request.js";
export { DEFAULT_SECTIONS, sectionTitle } from "./sections.js";
export { ArtifactWriteError, ReplyFormatError, type ResearchErrorCode } from "./errors.js";
export { ArtifactWriter } from "./artifacts/artifact-writer.js";
export {
  RecordedArtifacts,
  WRITE_ARTIFACT_DOC,
  type ArtifactWriteInput,
  type ArtifactWriteOutcome,
} from "./artifacts/recorded-artifacts.js";
export {
  CHOSEN_IDEA_FILE,
  EXPERIMENT_PLAN_FILE,
  IDEAS_FILE,
  LITERATURE_REVIEW_FILE,
  PAPER_FILE,
  REVIEW_FILE,
  sectionFile,
} from "./artifacts/layout.js";
export { UNVERIFIED_BANNER } from "./artifacts/render.js";
export type {
  ChosenIdea,
  Experiment,
  ExperimentPlan,
  Idea,
  LiteratureReview,
  PaperReview,
  ResearchInput,
  ResearchResult,
  ReviewScores,
  SectionDraft,
} from "./types.js";
