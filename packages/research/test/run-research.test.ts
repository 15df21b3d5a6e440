import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InvalidInputError, sessionContext } from "@openprogram/session-context";
import { describeSession } from "@openprogram/session-context/store";
import {
  CHOOSE_IDEA_DOC,
  DEFAULT_SECTIONS,
  RESEARCH_AGENT_DOC,
  researchAgent,
  runResearch,
  UNVERIFIED_BANNER,
  WRITE_ARTIFACT_DOC,
  type ResearchResult,
} from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { MODEL_STAGE_DOCS, researchModel, sectionOf, stageOf } from "./helpers/research-model.js";
import { calls, nodesOf, onlyCall } from "./helpers/session.js";

const TASK = "study the reliability of language agents";
const FULL_RUN_STAGES = [
  "survey_literature",
  "propose_ideas",
  "design_experiments",
  ...DEFAULT_SECTIONS.map(() => "write_section"),
  "review_paper",
  "revise_paper",
];
const EXPECTED_ARTIFACTS = [
  "literature review/review.md",
  "ideas/ideas.md",
  "ideas/chosen.md",
  "experiments/plan.md",
  ...DEFAULT_SECTIONS.map((section) => `paper/${section}.md`),
  "paper/paper.md",
  "review/review.md",
];

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("runResearch, end to end against a loopback OpenAI-compatible server", () => {
  it("sends every stage its doc as the system message and only data as content, in pipeline order", async () => {
    fixture = await startResearchFixture(researchModel());
    const run = await runResearch(TASK, { db: fixture.store.db, runtime: fixture.runtime, workDir: fixture.workDir() });

    const requests = fixture.server.requests;
    expect(requests.map(stageOf)).toEqual(FULL_RUN_STAGES);
    expect(requests.filter((request) => stageOf(request) === "write_section").map(sectionOf)).toEqual([
      ...DEFAULT_SECTIONS,
    ]);
    for (const request of requests) {
      const [system, ...rest] = request.json.messages ?? [];
      expect(system).toEqual({ role: "system", content: MODEL_STAGE_DOCS[stageOf(request)] });
      expect(rest.every((message) => message.role !== "system")).toBe(true);
      expect(request.json.model).toBe("fake-model");
    }

    // No instructions in content: no sentence of any doc (the stages', choose_idea's, research_agent's) is in any non-system message.
    const docLines = [...Object.values(MODEL_STAGE_DOCS), CHOOSE_IDEA_DOC, RESEARCH_AGENT_DOC]
      .flatMap((doc) => doc.split(/\n|(?<=[.:;])\s+/))
      .map((line) => line.trim())
      .filter((line) => line.length >= 20);
    expect(docLines.length).toBeGreaterThan(60);
    for (const request of requests) {
      for (const message of (request.json.messages ?? []).slice(1)) {
        for (const line of docLines)
          expect(message.content, `${stageOf(request)} content carries doc text`).not.toContain(line);
      }
    }

    // Nothing the model sees depends on where the run writes or which session it is.
    for (const request of requests) {
      expect(request.body).not.toContain(fixture.dir);
      expect(request.body).not.toContain(fixture.store.home);
      expect(request.body).not.toContain(run.sessionId);
    }

    expect(run.sessionId).toMatch(/^research_[0-9a-f]{10}$/);
    expect(run.created).toBe(true);
    expect(run.status).toBe("completed");
    expect(run.workDir).toBe(fixture.workDir());
  });

  it("writes every artifact to the work dir and returns their absolute paths, a summary and the stages' results", async () => {
    fixture = await startResearchFixture(researchModel());
    const workDir = fixture.workDir();
    const run = await runResearch(TASK, { db: fixture.store.db, runtime: fixture.runtime, workDir });

    expect(run.artifacts).toEqual(EXPECTED_ARTIFACTS.map((artifact) => join(workDir, ...artifact.split("/"))));
    for (const path of run.artifacts) expect(existsSync(path), path).toBe(true);
    const read = (artifact: string): string => readFileSync(join(workDir, artifact), "utf8");
    expect(read("literature review/review.md")).toContain(UNVERIFIED_BANNER);
    expect(read("literature review/review.md")).toContain("Reliable agents [run]");
    expect(read("ideas/ideas.md")).toContain("1. **Consistency metric [run]** — Measure run-to-run agreement.");
    expect(read("ideas/chosen.md")).toMatch(
      /Chosen by rank \(the run was not interactive\): The run was not interactive, so the top-ranked of 3 ideas was taken\./,
    );
    expect(read("experiments/plan.md")).toContain("Hypothesis: designs differ in consistency.");
    // The review asked for a revision: the revised paper replaced the draft, which was kept as v1.
    expect(read("paper/paper.md")).toMatch(/^# Consistency metric \[run\]\n/);
    expect(read("paper/paper.md")).toContain("## Related Work\n\nRevised related work [run].");
    expect(read("paper/paper.v1.md")).toContain("## Related Work\n\nThe related work text [run].");
    expect(read("paper/method.md")).toBe("## Method\n\nRevised method [run].\n");
    expect(read("review/review.md")).toContain("Decision: revise");

    const result = run.result;
    expect(result).toMatchObject({
      task: TASK,
      status: "completed",
      stoppedAt: null,
      sections: [...DEFAULT_SECTIONS],
      revised: true,
    });
    expect(result.artifacts).toEqual(EXPECTED_ARTIFACTS);
    expect(result.versioned).toEqual([
      ...DEFAULT_SECTIONS.map((section) => `paper/${section}.v1.md`),
      "paper/paper.v1.md",
    ]);
    expect(result.ideas.map((idea) => idea.title)).toEqual([
      "Consistency metric [run]",
      "Step blame [run]",
      "Self-checking calls [run]",
    ]);
    expect(result.chosenIdea).toMatchObject({ chosenBy: "rank", idea: { rank: 1 } });
    expect(result.review).toMatchObject({
      decision: "revise",
      scores: { novelty: 6, soundness: 5, clarity: 7, significance: 7, overall: 6 },
    });
    expect(result.paper).toBe(read("paper/paper.md"));
    expect(run.summary).toBe(result.summary);
    expect(run.summary).toMatch(
      /^Research on "study the reliability of language agents" completed\. Literature review: 2 key works, unverified/,
    );
    expect(run.summary).toContain(
      'pursued "Consistency metric [run]" (top-ranked, taken because the run was not interactive)',
    );
    expect(run.summary).toContain("Review: revise, overall 6/10; the paper was revised to address it.");
    expect(JSON.stringify(result)).not.toContain(fixture.dir);
  });

  it("records the run as research_agent with every stage call under it, each with its doc", async () => {
    fixture = await startResearchFixture(researchModel());
    const run = await runResearch(TASK, { db: fixture.store.db, runtime: fixture.runtime, workDir: fixture.workDir() });
    const nodes = await nodesOf(fixture.store.db, run.sessionId);

    const agent = onlyCall(nodes, "research_agent");
    expect(agent).toMatchObject({
      caller: "",
      predecessor: "ROOT",
      metadata: { status: "completed", expose: "output", doc: RESEARCH_AGENT_DOC },
    });
    expect(agent.input).toMatchObject({ task: TASK, workDir: fixture.workDir() });
    const underAgent = nodes.filter((node) => node.role === "code" && node.caller === agent.id);
    const stageNodes = underAgent.filter((node) => node.name !== "write_artifact");
    // Each file the run writes is a hidden write_artifact call (a resume replays it instead of writing again).
    const writes = underAgent.filter((node) => node.name === "write_artifact");
    expect(writes.map((node) => (node.input as { artifact: string }).artifact)).toEqual([
      "literature review/review.md",
      "ideas/ideas.md",
      "ideas/chosen.md",
      "experiments/plan.md",
      ...DEFAULT_SECTIONS.map((section) => `paper/${section}.md`),
      "paper/paper.md",
      "review/review.md",
      ...DEFAULT_SECTIONS.map((section) => `paper/${section}.md`),
      "paper/paper.md",
    ]);
    for (const write of writes) {
      expect(write.metadata).toMatchObject({ status: "completed", expose: "hidden", doc: WRITE_ARTIFACT_DOC });
      const { artifact, sha256 } = write.input as { artifact: string; sha256: string };
      expect(sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(write.output).toMatchObject({ artifact, sha256 });
    }
    expect(writes.map((node) => (node.output as { versioned: string | null }).versioned).filter(Boolean)).toEqual(
      run.result.versioned,
    );
    expect(stageNodes.map((node) => node.name)).toEqual([
      "survey_literature",
      "propose_ideas",
      "choose_idea",
      "design_experiments",
      ...DEFAULT_SECTIONS.map(() => "write_section"),
      "review_paper",
      "revise_paper",
    ]);
    for (const node of stageNodes) {
      expect(node.metadata.status).toBe("completed");
      expect(node.metadata.doc).toBe(node.name === "choose_idea" ? CHOOSE_IDEA_DOC : MODEL_STAGE_DOCS[node.name]);
      const llm = nodes.filter((candidate) => candidate.role === "llm" && candidate.caller === node.id);
      expect(llm.length, node.name).toBe(node.name === "choose_idea" ? 0 : 1);
      if (llm[0]) expect(llm[0].metadata.system).toBe(node.metadata.doc);
    }
    expect(onlyCall(nodes, "choose_idea").output).toMatchObject({
      chosenBy: "rank",
      reason: "The run was not interactive, so the top-ranked of 3 ideas was taken.",
    });
    const detail = await describeSession(run.sessionId, { db: fixture.store.db });
    expect(detail.record).toMatchObject({ status: "idle", source: "research", title: TASK });
  });

  it("skips revise_paper when the review accepts, and writes only the sections asked for, in that order", async () => {
    fixture = await startResearchFixture(researchModel({ decision: "accept" }));
    const run = await runResearch(TASK, {
      db: fixture.store.db,
      runtime: fixture.runtime,
      workDir: fixture.workDir(),
      sections: ["Method", "related-work"],
    });
    expect(fixture.server.requests.map(stageOf)).toEqual([
      "survey_literature",
      "propose_ideas",
      "design_experiments",
      "write_section",
      "write_section",
      "review_paper",
    ]);
    expect(fixture.server.requests.filter((request) => stageOf(request) === "write_section").map(sectionOf)).toEqual([
      "method",
      "related work",
    ]);
    expect(run.result).toMatchObject({ revised: false, versioned: [], sections: ["method", "related work"] });
    expect(run.result.artifacts).toEqual([
      "literature review/review.md",
      "ideas/ideas.md",
      "ideas/chosen.md",
      "experiments/plan.md",
      "paper/method.md",
      "paper/related work.md",
      "paper/paper.md",
      "review/review.md",
    ]);
    const paper = readFileSync(join(run.workDir, "paper", "paper.md"), "utf8");
    expect(paper.indexOf("## Method")).toBeLessThan(paper.indexOf("## Related Work"));
    expect(paper).not.toContain("## Abstract");
    expect(run.summary).toContain("Review: accept, overall 6/10.");
    // The second section was written knowing the first.
    const second = fixture.server.requests.filter((request) => stageOf(request) === "write_section")[1];
    expect(second?.json.messages?.at(-1)?.content).toContain(
      "Sections written so far:\n## Method\n\nThe method text [run].",
    );
  });
});

describe("researchAgent called directly, as the dispatcher registers it", () => {
  it("runs inside any sessionContext and defaults the work dir to ./research/<sessionId>", async () => {
    fixture = await startResearchFixture(researchModel());
    const cwd = process.cwd();
    process.chdir(fixture.dir);
    let sessionId = "";
    let result: ResearchResult;
    try {
      result = await sessionContext(
        { db: fixture.store.db, runtime: fixture.runtime, source: "test" },
        async (session) => {
          sessionId = session.sessionId;
          return researchAgent({ task: TASK });
        },
      );
    } finally {
      process.chdir(cwd);
    }
    expect(result.status).toBe("completed");
    for (const artifact of result.artifacts)
      expect(existsSync(join(fixture.dir, "research", sessionId, ...artifact.split("/"))), artifact).toBe(true);
    expect(fixture.server.requests.map(stageOf)).toEqual(FULL_RUN_STAGES);
  });

  it("refuses a work dir inside the session store before any model call", async () => {
    fixture = await startResearchFixture(researchModel());
    const store = fixture.store;
    // An existing session keeps the refused turn's record (a new one would be removed: nothing ran).
    await sessionContext({ db: store.db, sessionId: "research_store" }, async () => null);
    const error = await sessionContext({ db: store.db, runtime: fixture.runtime, sessionId: "research_store" }, () =>
      researchAgent({ task: TASK, workDir: join(store.root, "research_store", "workdir") }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as Error).message).toMatch(/inside the session store/);
    expect(fixture.server.requests).toHaveLength(0);
    const agent = onlyCall(await nodesOf(store.db, "research_store"), "research_agent");
    expect(agent.metadata.status).toBe("failed");
    expect(calls(await nodesOf(store.db, "research_store"), "survey_literature")).toHaveLength(0);
  });
});
