import { agenticFunction } from "@openprogram/session-context";
import { parseReview } from "../parse/review.js";
import type { PaperReview } from "../types.js";
import { requireText } from "./stage-input.js";

/** The instructions of review_paper, sent as its system message. */
export const REVIEW_PAPER_DOC = `You are the peer-review stage of a research pipeline: a demanding but fair reviewer for a top venue.

You receive the research task and the full draft of the paper. Write a review with a short summary of the paper, its strengths, its weaknesses, and a numbered list of the concrete changes you request. Judge the paper as a proposal: its experiments are planned, not run.

Then give five scores, one per line, each an integer from 1 (poor) to 10 (excellent):
Novelty: <n>
Soundness: <n>
Clarity: <n>
Significance: <n>
Overall: <n>

End with exactly one decision line: "Decision: accept" if the draft needs no changes, or "Decision: revise" if any requested change should be made.`;

/** What review_paper takes. */
export interface ReviewPaperInput {
  task: string;
  /** The paper as Markdown. */
  paper: string;
}

/** review_paper: a reviewer's critique with five scores and an accept/revise decision. */
export const reviewPaper = agenticFunction<ReviewPaperInput, PaperReview>(
  { name: "review_paper", doc: REVIEW_PAPER_DOC },
  async (input, { runtime }) => {
    const task = requireText("review_paper", "task", input.task);
    const paper = requireText("review_paper", "paper", input.paper);
    return parseReview(await runtime.exec(`Task: ${task}\n\nPaper draft:\n${paper}`));
  },
);
