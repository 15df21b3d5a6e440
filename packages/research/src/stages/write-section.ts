import { agenticFunction, InvalidInputError } from "@openprogram/session-context";
import { renderSection } from "../artifacts/render.js";
import { parseSectionText } from "../parse/section.js";
import { canonicalSection } from "../sections.js";
import type { Idea, SectionDraft } from "../types.js";
import { requireText } from "./stage-input.js";

/** The instructions of write_section, sent as its system message. */
export const WRITE_SECTION_DOC = `You are the section-writing stage of a research pipeline: you write one section of a research paper at a time.

You receive the research task, the name of the section to write, the chosen idea, the experiment plan, an unverified literature review, and the sections written so far. Write only the named section, consistent with the sections already written:
- abstract: 150 to 250 words: the problem, the idea, the planned evaluation, and the expected contribution.
- introduction: the problem and why it matters, the gap, the idea, and a bulleted list of contributions.
- related work: the lines of work from the literature review and how the idea differs from them; cite only works from the review, keep its "(uncertain)" marks, and add no references of your own.
- method: the idea precisely enough to implement: definitions, components, and the algorithm or procedure.
- experiments: the planned experiments: setup, baselines, metrics, and what each outcome would mean. No experiment has been run, so never report numbers as results.
- conclusion: what the paper proposes, its limitations, and the next steps.

Reply with the section's text in Markdown and nothing else: no heading for the section itself (### subheadings are fine), no preamble, no notes to the reader.`;

/** What write_section takes. */
export interface WriteSectionInput {
  task: string;
  /** One of DEFAULT_SECTIONS. */
  section: string;
  idea: Idea;
  /** The experiment plan's text. */
  experimentPlan: string;
  /** The literature review's text. */
  literatureReview: string;
  /** The sections written before this one, in order. */
  previousSections: SectionDraft[];
}

/** write_section: one section of the paper, consistent with the ones written before it. */
export const writeSection = agenticFunction<WriteSectionInput, SectionDraft>(
  { name: "write_section", doc: WRITE_SECTION_DOC },
  async (input, { runtime }) => {
    const section = canonicalSection(requireText("write_section", "section", input.section));
    if (section === null)
      throw new InvalidInputError(`write_section: unknown section ${JSON.stringify(input.section)}.`);
    const earlier = (input.previousSections ?? []).map(renderSection).join("\n");
    const content = [
      `Task: ${requireText("write_section", "task", input.task)}`,
      `Section: ${section}`,
      `Chosen idea: ${requireText("write_section", "idea.title", input.idea?.title)}\n${input.idea.summary}`,
      `Experiment plan:\n${requireText("write_section", "experimentPlan", input.experimentPlan)}`,
      `Literature review (unverified):\n${requireText("write_section", "literatureReview", input.literatureReview)}`,
      `Sections written so far:\n${earlier || "(none)"}`,
    ].join("\n\n");
    return { section, text: parseSectionText(await runtime.exec(content), section) };
  },
);
