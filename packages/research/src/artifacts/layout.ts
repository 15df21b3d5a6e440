// Where each artifact lives in the work dir ('/'-separated, relative). The
// names come from the Python harness, so existing work dirs stay familiar.

/** The literature review (always marked unverified). */
export const LITERATURE_REVIEW_FILE = "literature review/review.md";
/** The ranked ideas. */
export const IDEAS_FILE = "ideas/ideas.md";
/** The idea the run develops, who chose it and why. */
export const CHOSEN_IDEA_FILE = "ideas/chosen.md";
/** The experiment plan. */
export const EXPERIMENT_PLAN_FILE = "experiments/plan.md";
/** The assembled paper. */
export const PAPER_FILE = "paper/paper.md";
/** The reviewer's critique, scores and decision. */
export const REVIEW_FILE = "review/review.md";

/** One section of the paper: `paper/<section>.md` ("paper/related work.md"). */
export function sectionFile(section: string): string {
  return `paper/${section}.md`;
}
