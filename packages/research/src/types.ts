// The data the stages pass each other, and what a run returns. Everything here
// is plain JSON: it is recorded on the session's nodes, and a run's result is
// shown to the model in later runs of the same session.

/** The input of research_agent. */
export interface ResearchInput {
  /** What to research, in plain words. */
  task: string;
  /** Where artifacts go; default `./research/<sessionId>` relative to the process's cwd. */
  workDir?: string;
  /** Ask the user (askUser) which idea to pursue instead of taking the top-ranked one. */
  interactive?: boolean;
  /** Sections to write, in order; default DEFAULT_SECTIONS. */
  sections?: string[];
}

/** survey_literature's result. The review comes from the model's knowledge and is never verified. */
export interface LiteratureReview {
  /** The review as Markdown, without the harness's "unverified" banner. */
  text: string;
  keyWorks: string[];
  themes: string[];
  openProblems: string[];
  unverified: true;
}

/** One proposed idea; rank 1 is the best. */
export interface Idea {
  rank: number;
  title: string;
  summary: string;
}

/** choose_idea's result: the idea, who chose it, and why. */
export interface ChosenIdea {
  idea: Idea;
  chosenBy: "user" | "rank";
  reason: string;
}

/** One planned experiment. */
export interface Experiment {
  name: string;
  hypothesis: string;
  setup: string;
  metric: string;
  expectedOutcome: string;
}

/** design_experiments' result. */
export interface ExperimentPlan {
  /** The plan as the model wrote it. */
  text: string;
  experiments: Experiment[];
}

/** The text of one section of the paper. */
export interface SectionDraft {
  section: string;
  text: string;
}

/** The reviewer's scores, 1 (poor) to 10 (excellent). */
export interface ReviewScores {
  novelty: number;
  soundness: number;
  clarity: number;
  significance: number;
  overall: number;
}

/** review_paper's result. */
export interface PaperReview {
  text: string;
  scores: ReviewScores;
  decision: "accept" | "revise";
}

/** What research_agent returns. It contains no path and no id: later runs of the session show it to the model. */
export interface ResearchResult {
  task: string;
  /** "stopped": the user declined to choose an idea; the artifacts written so far are kept. */
  status: "completed" | "stopped";
  /** The stage the run stopped at, when stopped. */
  stoppedAt: string | null;
  /** One paragraph saying what happened, including why a run stopped. */
  summary: string;
  sections: string[];
  /** The literature review with its "unverified" banner. */
  literatureReview: string | null;
  ideas: Idea[];
  chosenIdea: ChosenIdea | null;
  /** The experiment plan as Markdown. */
  experiments: string | null;
  /** The final paper as Markdown (revised when the review asked for it). */
  paper: string | null;
  review: PaperReview | null;
  revised: boolean;
  /** Artifacts written by this run, relative to the work dir, '/'-separated. */
  artifacts: string[];
  /** Earlier files this run moved aside (`<name>.v<N>.md`), relative to the work dir. */
  versioned: string[];
}
