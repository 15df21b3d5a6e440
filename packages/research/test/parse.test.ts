import { describe, expect, it } from "vitest";
import { ReplyFormatError } from "../src/index.js";
import { parseExperimentPlan } from "../src/parse/experiments.js";
import { parseIdeas } from "../src/parse/ideas.js";
import { parseLiteratureReview } from "../src/parse/literature-review.js";
import { parseReview } from "../src/parse/review.js";
import { parseRevision } from "../src/parse/revision.js";
import { parseSectionText } from "../src/parse/section.js";

function formatError(run: () => unknown): ReplyFormatError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ReplyFormatError);
    return error as ReplyFormatError;
  }
  throw new Error("expected a ReplyFormatError");
}

describe("survey_literature's reply", () => {
  it("reads the three headed bullet lists, in any heading style", () => {
    const review = parseLiteratureReview(
      "Preamble.\n# Key Works:\n- A (2020). X.\n* B (2021). Y.\n\n**Themes**\n- t1\n\nOpen problems:\n1. p1\n2. p2\n",
    );
    expect(review).toMatchObject({
      keyWorks: ["A (2020). X.", "B (2021). Y."],
      themes: ["t1"],
      openProblems: ["p1", "p2"],
      unverified: true,
    });
    expect(review.text.startsWith("Preamble.")).toBe(true);
    expect(
      parseLiteratureReview("```md\n## Key works\n- a\n## Themes\n- b\n## Open problems\n- c\n```").openProblems,
    ).toEqual(["c"]);
  });

  it("fails on the stage, naming the missing section, when a section is absent or empty", () => {
    expect(formatError(() => parseLiteratureReview("## Key works\n- a\n## Themes\n- b\n")).message).toMatch(
      /survey_literature.*"## Open problems"/,
    );
    const error = formatError(() => parseLiteratureReview("What would you like to do?"));
    expect(error).toMatchObject({ code: "reply_format", stage: "survey_literature" });
    expect(error.message).toContain("What would you like to do?");
  });
});

describe("propose_ideas' reply", () => {
  it("reads a ranked numbered list with titles and summaries in several styles", () => {
    const ideas = parseIdeas(
      [
        "Here you go:",
        "1. **ReAct: a title with a colon** — First summary,",
        "   continued on a second line.",
        "2) Second idea - its summary",
        "3. Third idea: summary after a colon",
        "",
        "These are my ideas.",
      ].join("\n"),
    );
    expect(ideas).toEqual([
      { rank: 1, title: "ReAct: a title with a colon", summary: "First summary, continued on a second line." },
      { rank: 2, title: "Second idea", summary: "its summary" },
      { rank: 3, title: "Third idea", summary: "summary after a colon" },
    ]);
  });

  it("ranks by the numbers given, and refuses a list without items or with a repeated rank", () => {
    expect(parseIdeas("2. B — b\n1. A — a").map((idea) => [idea.rank, idea.title])).toEqual([
      [1, "A"],
      [2, "B"],
    ]);
    expect(formatError(() => parseIdeas("- an unnumbered idea")).message).toMatch(/no numbered list of ideas/);
    expect(formatError(() => parseIdeas("1. A — a\n1. B — b")).message).toMatch(/rank 1 appears twice/);
  });
});

describe("design_experiments' reply", () => {
  it("reads labelled fields on their own lines, bulleted, bold or inline", () => {
    const plan = parseExperimentPlan(
      [
        "1. **Reruns**",
        "   - **Hypothesis:** designs differ.",
        "   - Setup: three designs.",
        "   - Metrics: agreement",
        "     rate.",
        "   - Expected result: a spread.",
        "2. Inline — Hypothesis: h2. Setup: s2. Metric: m2. Expected outcome: e2.",
      ].join("\n"),
    );
    expect(plan.experiments).toEqual([
      {
        name: "Reruns",
        hypothesis: "designs differ.",
        setup: "three designs.",
        metric: "agreement rate.",
        expectedOutcome: "a spread.",
      },
      { name: "Inline", hypothesis: "h2.", setup: "s2.", metric: "m2.", expectedOutcome: "e2." },
    ]);
  });

  it("names the experiment and the missing field", () => {
    expect(
      formatError(() => parseExperimentPlan("1. A\nHypothesis: h\nSetup: s\nExpected outcome: e")).message,
    ).toMatch(/experiment 1 has no "Metric:" line/);
    expect(formatError(() => parseExperimentPlan("Hypothesis: h")).message).toMatch(/no numbered list of experiments/);
  });
});

describe("write_section's reply", () => {
  it("drops a heading the model added and keeps the text", () => {
    expect(parseSectionText("## Related Work\n\nText.\n\n### Sub\nMore.", "related work")).toBe(
      "Text.\n\n### Sub\nMore.",
    );
    expect(parseSectionText("**Abstract:**\nText.", "abstract")).toBe("Text.");
    expect(parseSectionText("Text only.", "method")).toBe("Text only.");
    expect(parseSectionText("```markdown\n## Method\nFenced text.\n```", "method")).toBe("Fenced text.");
  });

  it("refuses an empty section", () => {
    expect(formatError(() => parseSectionText("## Method\n\n", "method")).message).toMatch(
      /the method section is empty/,
    );
  });
});

describe("review_paper's reply", () => {
  it("reads scores and the decision in tolerant forms", () => {
    const review = parseReview(
      "Critique.\n- **Novelty**: 6/10\n| Soundness | 5 |\nClarity = 7\nSignificance: 7\nOverall score: 6\nDecision: accept\n**Final decision:** Minor revision.",
    );
    expect(review.scores).toEqual({ novelty: 6, soundness: 5, clarity: 7, significance: 7, overall: 6 });
    expect(review.decision).toBe("revise");
    expect(
      parseReview("Novelty: 9\nSoundness: 9\nClarity: 9\nSignificance: 9\nOverall: 9\nDecision: Accepted").decision,
    ).toBe("accept");
  });

  it("refuses missing scores, out-of-range scores, a missing or unknown decision", () => {
    const scores = "Novelty: 6\nSoundness: 5\nClarity: 7\nSignificance: 7\n";
    expect(formatError(() => parseReview(`${scores}Decision: revise`)).message).toMatch(/no score line for Overall/);
    expect(formatError(() => parseReview(`${scores}Overall: 11\nDecision: revise`)).message).toMatch(
      /overall score 11 is not between 1 and 10/,
    );
    expect(formatError(() => parseReview(`${scores}Overall: 6`)).message).toMatch(
      /no "Decision: accept" or "Decision: revise" line/,
    );
    expect(formatError(() => parseReview(`${scores}Overall: 6\nDecision: reject`)).message).toMatch(
      /"reject" is neither accept nor revise/,
    );
  });
});

describe("revise_paper's reply", () => {
  const sections = ["abstract", "related work", "method"];

  it("reads each section under its heading, whatever the numbering and case, keeping subheadings", () => {
    const revision = parseRevision(
      "# A Title\n\n## 1. ABSTRACT\nA.\n\n## Related Works\nR.\n### Detail\nD.\n\n**Methodology**\nM.",
      sections,
    );
    expect(revision).toEqual([
      { section: "abstract", text: "A." },
      { section: "related work", text: "R.\n### Detail\nD." },
      { section: "method", text: "M." },
    ]);
  });

  it("refuses a missing, repeated or empty section", () => {
    expect(formatError(() => parseRevision("## Abstract\nA.\n## Method\nM.", sections)).message).toMatch(
      /no "## Related Work" heading \(missing: Related Work\)/,
    );
    expect(formatError(() => parseRevision("## Abstract\nA.\n## Abstract\nB.", sections)).message).toMatch(
      /"Abstract" appears twice/,
    );
    expect(
      formatError(() => parseRevision("## Abstract\n\n## Related Work\nR.\n## Method\nM.", sections)).message,
    ).toMatch(/"Abstract" is empty/);
  });
});
