import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AskUserUnavailableError, sessionContext } from "@openprogram/session-context";
import { describeSession } from "@openprogram/session-context/store";
import { createScriptedAsker } from "@openprogram/session-context/testing";
import { CHOOSE_IDEA_QUESTION, researchAgent, runResearch } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { contentOf, researchModel, stageOf } from "./helpers/research-model.js";
import { nodesOf, onlyCall } from "./helpers/session.js";

const TASK = "study the reliability of language agents";
const CHOICES = ["1. Consistency metric [run]", "2. Step blame [run]", "3. Self-checking calls [run]"];

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

describe("interactive: choose_idea asks the user, with the ideas as choices", () => {
  it("records the question as an ask_user node under choose_idea and develops the idea the user picked", async () => {
    fixture = await startResearchFixture(researchModel());
    const asker = createScriptedAsker(["2"]);
    const run = await runResearch(TASK, {
      db: fixture.store.db,
      runtime: fixture.runtime,
      workDir: fixture.workDir(),
      interactive: true,
      asker,
    });

    expect(asker.questions).toEqual([
      expect.objectContaining({ question: CHOOSE_IDEA_QUESTION, choices: CHOICES, sessionId: run.sessionId }),
    ]);
    const nodes = await nodesOf(fixture.store.db, run.sessionId);
    const choose = onlyCall(nodes, "choose_idea");
    const question = nodes.filter((node) => node.name === "ask_user");
    expect(question).toHaveLength(1);
    expect(question[0]).toMatchObject({
      role: "user",
      input: CHOOSE_IDEA_QUESTION,
      output: "2. Step blame [run]",
      caller: choose.id,
      metadata: { status: "answered", choices: CHOICES },
    });
    expect(choose.output).toMatchObject({ chosenBy: "user", idea: { rank: 2, title: "Step blame [run]" } });

    expect(run.result.chosenIdea).toMatchObject({
      chosenBy: "user",
      reason: 'The user chose "2. Step blame [run]" from 3 ranked ideas.',
    });
    const design = fixture.server.requests.find((request) => stageOf(request) === "design_experiments");
    if (!design) throw new Error("no design_experiments request");
    expect(contentOf(design)).toContain("Chosen idea: Step blame [run]\nAttribute failures to steps.");
    expect(run.summary).toContain('pursued "Step blame [run]" (chosen by the user)');
    expect(run.status).toBe("completed");
  });

  it("stops cleanly when the user declines, keeps the partial results and says so", async () => {
    fixture = await startResearchFixture(researchModel());
    const workDir = fixture.workDir();
    const asker = createScriptedAsker([{ decline: true, reason: "none of these" }]);
    const run = await runResearch(TASK, {
      db: fixture.store.db,
      runtime: fixture.runtime,
      workDir,
      interactive: true,
      asker,
    });

    expect(run.status).toBe("stopped");
    expect(run.result).toMatchObject({
      status: "stopped",
      stoppedAt: "choose_idea",
      chosenIdea: null,
      experiments: null,
      paper: null,
      review: null,
    });
    expect(run.result.artifacts).toEqual(["literature review/review.md", "ideas/ideas.md"]);
    for (const path of run.artifacts) expect(existsSync(path)).toBe(true);
    expect(existsSync(join(workDir, "paper"))).toBe(false);
    expect(run.summary).toMatch(/stopped at choose_idea: the user declined to choose one of the 3 ideas/);
    expect(run.summary).toContain("The partial results are kept: literature review/review.md, ideas/ideas.md.");
    expect(fixture.server.requests.map(stageOf)).toEqual(["survey_literature", "propose_ideas"]);

    const nodes = await nodesOf(fixture.store.db, run.sessionId);
    expect(nodes.find((node) => node.name === "ask_user")?.metadata).toMatchObject({
      status: "declined",
      reason: "none of these",
    });
    expect(onlyCall(nodes, "choose_idea").metadata).toMatchObject({
      status: "failed",
      error: { code: "user_declined" },
    });
    expect(onlyCall(nodes, "research_agent").metadata.status).toBe("completed");
    expect((await describeSession(run.sessionId, { db: fixture.store.db })).record.status).toBe("idle");
  });

  it("fails before any model call when no asker can reach the user", async () => {
    fixture = await startResearchFixture(researchModel());
    const error = await runResearch(TASK, {
      db: fixture.store.db,
      runtime: fixture.runtime,
      workDir: fixture.workDir(),
      interactive: true,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AskUserUnavailableError);
    expect((error as Error).message).toMatch(/--answers <file>.*sessionContext\(\{ asker \}\)/);
    expect(fixture.server.requests).toHaveLength(0);
    expect(await fixture.store.db.listSessions()).toHaveLength(0);

    // The same through researchAgent in a context without an asker, in a session that exists (a refused
    // run's new session is removed), where the node records why.
    const workDir = fixture.workDir();
    await sessionContext({ db: fixture.store.db, sessionId: "research_noasker" }, async () => null);
    const direct = await sessionContext(
      { db: fixture.store.db, runtime: fixture.runtime, sessionId: "research_noasker", asker: null },
      () => researchAgent({ task: TASK, workDir, interactive: true }),
    ).catch((caught: unknown) => caught);
    expect(direct).toBeInstanceOf(AskUserUnavailableError);
    expect(fixture.server.requests).toHaveLength(0);
    expect(onlyCall(await nodesOf(fixture.store.db, "research_noasker"), "research_agent").metadata).toMatchObject({
      status: "failed",
      error: { code: "ask_user_unavailable" },
    });
  });
});
