import type { ChosenIdea, ExperimentPlan, Idea, LiteratureReview, PaperReview } from "./types.js";

/** What a completed run's summary is made of. */
export interface CompletedRun {
  task: string;
  review: LiteratureReview;
  ideas: Idea[];
  chosen: ChosenIdea;
  plan: ExperimentPlan;
  sections: string[];
  verdict: PaperReview;
  revised: boolean;
  artifacts: string[];
  versioned: string[];
}

/** One paragraph on a completed run. Mentions no path but the work-dir-relative artifact names. */
export function summarizeCompletedRun(run: CompletedRun): string {
  const by =
    run.chosen.chosenBy === "user" ? "chosen by the user" : "top-ranked, taken because the run was not interactive";
  const revision = run.revised ? "; the paper was revised to address it" : "";
  return (
    `Research on ${JSON.stringify(run.task)} completed. ` +
    `Literature review: ${run.review.keyWorks.length} key works, unverified (check every reference before citing it). ` +
    `Ideas: ${run.ideas.length}, ranked; pursued "${run.chosen.idea.title}" (${by}). ` +
    `Experiments planned: ${run.plan.experiments.length}. Sections written: ${run.sections.join(", ")}. ` +
    `Review: ${run.verdict.decision}, overall ${run.verdict.scores.overall}/10${revision}. ` +
    `Files: ${run.artifacts.join(", ")}.` +
    versionNote(run.versioned)
  );
}

/** One paragraph on a run the user stopped by declining to choose an idea. */
export function summarizeStoppedRun(run: {
  task: string;
  ideas: Idea[];
  artifacts: string[];
  versioned: string[];
}): string {
  return (
    `Research on ${JSON.stringify(run.task)} stopped at choose_idea: the user declined to choose one of the ${run.ideas.length} ideas, ` +
    "so no experiments were designed and no paper was written. " +
    `The partial results are kept: ${run.artifacts.join(", ")}. Run again in the same session to choose an idea and write the paper.` +
    versionNote(run.versioned)
  );
}

function versionNote(versioned: string[]): string {
  return versioned.length > 0 ? ` Earlier files were kept as versions: ${versioned.join(", ")}.` : "";
}
