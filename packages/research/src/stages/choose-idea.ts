import { agenticFunction, askUser, InvalidInputError } from "@openprogram/session-context";
import type { ChosenIdea, Idea } from "../types.js";

/** The question an interactive run asks; the ideas are its choices. */
export const CHOOSE_IDEA_QUESTION = "Which idea should the research pursue?";

/** The rule of choose_idea (it does not call the model; the doc records what it does). */
export const CHOOSE_IDEA_DOC = `You are the idea-choice stage of a research pipeline; this stage does not call the model.

It receives the ranked ideas. In an interactive run it asks the user "${CHOOSE_IDEA_QUESTION}" with the ideas as choices ("<rank>. <title>"), and the answer decides; if the user declines, the pipeline stops and keeps what it has written. In a run that is not interactive it takes the top-ranked idea and records why.`;

/** What choose_idea takes. */
export interface ChooseIdeaInput {
  ideas: Idea[];
  interactive?: boolean;
}

/**
 * choose_idea: asks the user through askUser when interactive (UserDeclinedError
 * when they decline), else takes the top-ranked idea and says so.
 */
export const chooseIdea = agenticFunction<ChooseIdeaInput, ChosenIdea>(
  { name: "choose_idea", doc: CHOOSE_IDEA_DOC },
  async ({ ideas, interactive }) => {
    if (!Array.isArray(ideas) || ideas.length === 0)
      throw new InvalidInputError("choose_idea needs ideas: a non-empty array of ranked ideas.");
    const ranked = [...ideas].sort((a, b) => a.rank - b.rank);
    const top = ranked[0] as Idea;
    if (!interactive) {
      return {
        idea: top,
        chosenBy: "rank",
        reason: `The run was not interactive, so the top-ranked of ${ranked.length} ideas was taken.`,
      };
    }
    const choices = ranked.map((idea) => `${idea.rank}. ${idea.title}`);
    const answer = await askUser(CHOOSE_IDEA_QUESTION, { choices });
    const idea = ranked[choices.indexOf(answer)] as Idea;
    return { idea, chosenBy: "user", reason: `The user chose "${answer}" from ${ranked.length} ranked ideas.` };
  },
);
