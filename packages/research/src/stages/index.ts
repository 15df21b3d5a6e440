// The stage functions, in pipeline order.
export { surveyLiterature, SURVEY_LITERATURE_DOC } from "./survey-literature.js";
export { proposeIdeas, PROPOSE_IDEAS_DOC, type ProposeIdeasInput } from "./propose-ideas.js";
export { chooseIdea, CHOOSE_IDEA_DOC, CHOOSE_IDEA_QUESTION, type ChooseIdeaInput } from "./choose-idea.js";
export { designExperiments, DESIGN_EXPERIMENTS_DOC, type DesignExperimentsInput } from "./design-experiments.js";
export { writeSection, WRITE_SECTION_DOC, type WriteSectionInput } from "./write-section.js";
export { reviewPaper, REVIEW_PAPER_DOC, type ReviewPaperInput } from "./review-paper.js";
export { revisePaper, REVISE_PAPER_DOC, type RevisePaperInput } from "./revise-paper.js";
