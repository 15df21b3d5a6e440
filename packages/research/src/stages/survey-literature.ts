import { agenticFunction } from "@openprogram/session-context";
import { parseLiteratureReview } from "../parse/literature-review.js";
import type { LiteratureReview } from "../types.js";
import { requireText } from "./stage-input.js";

/** The instructions of survey_literature, sent as its system message. */
export const SURVEY_LITERATURE_DOC = `You are the literature-survey stage of a research pipeline.

You receive a research task. Write a structured review of the literature most relevant to it, from your own knowledge. You cannot search or open papers, so the review is marked as unverified: mark any detail you are unsure of with "(uncertain)", and never invent DOIs, URLs or quotations. If earlier runs in this conversation already surveyed the topic, build on them instead of starting over.

Reply in Markdown with exactly these three level-2 headings, in this order, and nothing before the first one:

## Key works
5 to 10 bullets, one per work: "- Authors (Year). Title. Venue. — why it matters to the task."

## Themes
2 to 5 bullets, each a line of work and how the key works relate to it.

## Open problems
2 to 5 bullets, each a gap that the task could address.`;

/** survey_literature: a structured literature review of the task from the model's knowledge, flagged unverified. */
export const surveyLiterature = agenticFunction<{ task: string }, LiteratureReview>(
  { name: "survey_literature", doc: SURVEY_LITERATURE_DOC },
  async ({ task }, { runtime }) =>
    parseLiteratureReview(await runtime.exec(`Task: ${requireText("survey_literature", "task", task)}`)),
);
