import { afterEach, describe, expect, it } from "vitest";
import { sessionContext } from "@openprogram/session-context";
import { runResearch } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel, stageOf } from "./helpers/research-model.js";

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

// The source design's example: run a survey, then "now turn it into a paper"
// with the returned id, then an unrelated task without the id.
describe("continuation is decided by who passes the session id", () => {
  it("shows the second run the first run's stage outputs, and gives an unrelated task a new session", async () => {
    fixture = await startResearchFixture(researchModel({ mark: "first" }));
    const { db } = fixture.store;
    const runtime = fixture.runtime;
    const workDir = fixture.workDir("shared");

    const r1 = await runResearch("survey agent reliability", { db, runtime, workDir });
    const firstCount = fixture.server.requests.length;

    fixture.server.setHandler(researchModel({ mark: "second" }));
    const r2 = await runResearch("now turn it into a paper", { sessionId: r1.sessionId, db, runtime, workDir });
    const second = fixture.server.requests.slice(firstCount);
    expect(r2.sessionId).toBe(r1.sessionId);
    expect(r2.created).toBe(false);
    expect(second.length).toBeGreaterThan(0);

    const firstOutputs = [
      "Reliable agents [first]", // survey_literature
      "Consistency metric [first]", // propose_ideas and choose_idea
      "Hypothesis: designs differ in consistency.", // design_experiments
      "Revised related work [first]", // write_section, then revise_paper
      "Solid but vague [first]", // review_paper
    ];
    for (const request of second) {
      const messages = request.json.messages ?? [];
      // system, the first run (its result only: the input holds the work dir), then this stage's data.
      expect(messages.map((message) => message.role)).toEqual(["system", "assistant", "user"]);
      const history = messages[1]?.content ?? "";
      expect(history.startsWith("research_agent returned: {")).toBe(true);
      for (const output of firstOutputs) expect(history, `${stageOf(request)} sees ${output}`).toContain(output);
      expect(history).toContain('"task":"survey agent reliability"');
      expect(request.body).not.toContain("Call research_agent with input");
      expect(request.body).not.toContain(workDir);
      expect(request.body).not.toContain(r1.sessionId);
      expect(messages[2]?.content).toMatch(/^Task: now turn it into a paper(\n|$)/);
    }
    // The same work dir: the first run's files were kept as versions, not overwritten.
    expect(r2.result.versioned).toContain("literature review/review.v1.md");
    expect(r2.result.versioned).toContain("paper/paper.v2.md");

    const secondCount = fixture.server.requests.length;
    fixture.server.setHandler(researchModel({ mark: "third" }));
    const r3 = await runResearch("unrelated: GUI agent benchmark", { db, runtime, workDir: fixture.workDir("third") });
    expect(r3.sessionId).not.toBe(r1.sessionId);
    expect(r3.sessionId).toMatch(/^research_[0-9a-f]{10}$/);
    expect(r3.created).toBe(true);
    for (const request of fixture.server.requests.slice(secondCount)) {
      expect(request.json.messages?.map((message) => message.role)).toEqual(["system", "user"]);
      expect(request.body).not.toMatch(/\[(first|second)\]/);
    }

    const sessions = await db.listSessions();
    expect(sessions.map((session) => session.id).sort()).toEqual([r1.sessionId, r3.sessionId].sort());
    expect(sessions.every((session) => session.source === "research")).toBe(true);
  });

  it("joins the enclosing context's session and turn when called inside one without an id", async () => {
    fixture = await startResearchFixture(researchModel());
    const { db } = fixture.store;
    const workDir = fixture.workDir();
    const outcome = await sessionContext(
      { db, runtime: fixture.runtime, idPrefix: "research", source: "cli" },
      async (session) => ({
        outer: session,
        run: await runResearch("survey agent reliability", { workDir }),
      }),
    );
    expect(outcome.run.sessionId).toBe(outcome.outer.sessionId);
    expect(outcome.run.created).toBe(false);
    expect(await db.listSessions()).toHaveLength(1);
    const log = await db.gitLog(outcome.outer.sessionId);
    // One turn, one commit (besides the session's first commit): the run joined the CLI's turn.
    expect(log.map((entry) => entry.message)).toEqual([
      expect.stringMatching(/^turn turn_[0-9a-f]{10} \(cli\)$/),
      "session init",
    ]);
  });
});
