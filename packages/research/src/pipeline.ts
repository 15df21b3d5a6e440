import { hasErrorCode } from "@openprogram/session-context";
import type { RecordedArtifacts } from "./artifacts/recorded-artifacts.js";
import {
  CHOSEN_IDEA_FILE,
  EXPERIMENT_PLAN_FILE,
  IDEAS_FILE,
  LITERATURE_REVIEW_FILE,
  PAPER_FILE,
  REVIEW_FILE,
  sectionFile,
} from "./artifacts/layout.js";
import {
  renderChosenIdea,
  renderExperimentPlan,
  renderIdeas,
  renderLiteratureReview,
  renderPaper,
  renderReview,
  renderSection,
} from "./artifacts/render.js";
import { chooseIdea } from "./stages/choose-idea.js";
import { designExperiments } from "./stages/design-experiments.js";
import { proposeIdeas } from "./stages/propose-ideas.js";
import { reviewPaper } from "./stages/review-paper.js";
import { revisePaper } from "./stages/revise-paper.js";
import { surveyLiterature } from "./stages/survey-literature.js";
import { writeSection } from "./stages/write-section.js";
import { summarizeCompletedRun, summarizeStoppedRun } from "./summary.js";
import type { ChosenIdea, ResearchResult, SectionDraft } from "./types.js";

/** A validated research request. */
export interface PipelineRequest {
  task: string;
  sections: string[];
  interactive: boolean;
}

/**
 * Runs the stages in order, passing each the data it needs and writing each
 * result to the work dir as soon as it exists (a recorded write_artifact
 * call), so a failure later keeps what was done. A declined idea choice stops the run with what it has; any other
 * error propagates (the failing stage's node records it).
 */
export async function runPipeline(
  { task, sections, interactive }: PipelineRequest,
  artifacts: RecordedArtifacts,
): Promise<ResearchResult> {
  const review = await surveyLiterature({ task });
  const literatureReview = renderLiteratureReview(review);
  await artifacts.write(LITERATURE_REVIEW_FILE, literatureReview);

  const ideas = await proposeIdeas({ task, literatureReview: review.text });
  await artifacts.write(IDEAS_FILE, renderIdeas(ideas));

  const base = { task, sections, literatureReview, ideas };
  let chosen: ChosenIdea;
  try {
    chosen = await chooseIdea({ ideas, interactive });
  } catch (error) {
    if (!hasErrorCode(error, "user_declined")) throw error;
    const files = { artifacts: [...artifacts.written], versioned: [...artifacts.versioned] };
    return {
      ...base,
      ...files,
      status: "stopped",
      stoppedAt: "choose_idea",
      summary: summarizeStoppedRun({ task, ideas, ...files }),
      chosenIdea: null,
      experiments: null,
      paper: null,
      review: null,
      revised: false,
    };
  }
  await artifacts.write(CHOSEN_IDEA_FILE, renderChosenIdea(chosen));

  const plan = await designExperiments({ task, idea: chosen.idea, openProblems: review.openProblems });
  await artifacts.write(EXPERIMENT_PLAN_FILE, renderExperimentPlan(plan));

  let drafts: SectionDraft[] = [];
  for (const section of sections) {
    const draft = await writeSection({
      task,
      section,
      idea: chosen.idea,
      experimentPlan: plan.text,
      literatureReview: review.text,
      previousSections: drafts,
    });
    drafts = [...drafts, draft];
    await artifacts.write(sectionFile(draft.section), renderSection(draft));
  }
  let paper = renderPaper(chosen.idea.title, drafts);
  await artifacts.write(PAPER_FILE, paper);

  const verdict = await reviewPaper({ task, paper });
  await artifacts.write(REVIEW_FILE, renderReview(verdict));

  const revised = verdict.decision === "revise";
  if (revised) {
    const revision = await revisePaper({ task, sections, paper, review: verdict.text });
    for (const draft of revision) await artifacts.write(sectionFile(draft.section), renderSection(draft));
    paper = renderPaper(chosen.idea.title, revision);
    await artifacts.write(PAPER_FILE, paper);
  }

  const files = { artifacts: [...artifacts.written], versioned: [...artifacts.versioned] };
  return {
    ...base,
    ...files,
    status: "completed",
    stoppedAt: null,
    summary: summarizeCompletedRun({ task, review, ideas, chosen, plan, sections, verdict, revised, ...files }),
    chosenIdea: chosen,
    experiments: plan.text,
    paper,
    review: verdict,
    revised,
  };
}
