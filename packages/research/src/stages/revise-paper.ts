import { agenticFunction } from "@openprogram/session-context";
import { parseRevision } from "../parse/revision.js";
import { resolveSections, sectionTitle } from "../sections.js";
import type { SectionDraft } from "../types.js";
import { requireText } from "./stage-input.js";

/** The instructions of revise_paper, sent as its system message. */
export const REVISE_PAPER_DOC = `You are the revision stage of a research pipeline.

You receive the research task, the names of the paper's sections, the draft of the paper, and a reviewer's critique. Revise the draft to address every requested change that can be addressed honestly: clarify, restructure, tighten, and add missing detail, but never invent results or references; where a request needs work that has not been done, say what is planned instead.

Reply with the complete revised paper and nothing else: every section of the draft, in the same order, each under a level-2 heading with the section's name (for example "## Related Work"), and no title line.`;

/** What revise_paper takes. */
export interface RevisePaperInput {
  task: string;
  /** The paper's sections, in order. */
  sections: string[];
  /** The draft as Markdown. */
  paper: string;
  /** The reviewer's critique. */
  review: string;
}

/** revise_paper: the whole paper revised to address the review, section by section. */
export const revisePaper = agenticFunction<RevisePaperInput, SectionDraft[]>(
  { name: "revise_paper", doc: REVISE_PAPER_DOC },
  async (input, { runtime }) => {
    const sections = resolveSections(input.sections);
    const content = [
      `Task: ${requireText("revise_paper", "task", input.task)}`,
      `Sections: ${sections.map(sectionTitle).join(", ")}`,
      `Paper draft:\n${requireText("revise_paper", "paper", input.paper)}`,
      `Review:\n${requireText("revise_paper", "review", input.review)}`,
    ].join("\n\n");
    return parseRevision(await runtime.exec(content), sections);
  },
);
