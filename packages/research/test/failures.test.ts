import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CancelledError, InvalidModelOutputError, ProviderError } from "@openprogram/session-context";
import { describeSession } from "@openprogram/session-context/store";
import { runResearch } from "../src/index.js";
import { startResearchFixture, type ResearchFixture } from "./helpers/fixture.js";
import { researchModel, sectionOf, stageOf } from "./helpers/research-model.js";
import { calls, nodesOf, onlyCall } from "./helpers/session.js";

const TASK = "study the reliability of language agents";

let fixture: ResearchFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((entry) => entry.split("\\").join("/"))
    .sort();
}

describe("a provider error mid-pipeline", () => {
  it("fails that stage's node, keeps the artifacts written so far, and the same session id runs again to completion", async () => {
    let failed = false;
    fixture = await startResearchFixture(
      researchModel({
        mark: "first",
        override: (stage, request) => {
          if (failed || stage !== "write_section" || sectionOf(request) !== "method") return undefined;
          failed = true;
          return { status: 500, message: "the model is on fire" };
        },
      }),
    );
    const { db } = fixture.store;
    const workDir = fixture.workDir();
    const error = await runResearch(TASK, { db, runtime: fixture.runtime, workDir }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      code: "provider_error",
      status: 500,
      providerMessage: "the model is on fire",
      workDir,
    });
    const sessionId = (error as { sessionId: string }).sessionId;
    expect(sessionId).toMatch(/^research_[0-9a-f]{10}$/);

    const nodes = await nodesOf(db, sessionId);
    expect(
      calls(nodes, "write_section").map((node) => [(node.input as { section: string }).section, node.metadata.status]),
    ).toEqual([
      ["abstract", "completed"],
      ["introduction", "completed"],
      ["related work", "completed"],
      ["method", "failed"],
    ]);
    expect(calls(nodes, "write_section")[3]?.metadata.error).toMatchObject({
      name: "ProviderError",
      code: "provider_error",
    });
    expect(onlyCall(nodes, "research_agent").metadata.status).toBe("failed");
    expect(calls(nodes, "review_paper")).toHaveLength(0);
    expect((await describeSession(sessionId, { db })).record.status).toBe("failed");

    // Everything written before the failure is there, complete; nothing after it; no temp files.
    expect(filesUnder(workDir)).toEqual([
      "experiments",
      "experiments/plan.md",
      "ideas",
      "ideas/chosen.md",
      "ideas/ideas.md",
      "literature review",
      "literature review/review.md",
      "paper",
      "paper/abstract.md",
      "paper/introduction.md",
      "paper/related work.md",
    ]);
    expect(readFileSync(join(workDir, "paper", "related work.md"), "utf8")).toBe(
      "## Related Work\n\nThe related work text [first].\n",
    );

    // Run again with the same id: it completes; the model is told the earlier run failed; earlier files become versions.
    const before = fixture.server.requests.length;
    fixture.server.setHandler(researchModel({ mark: "rerun" }));
    const rerun = await runResearch(TASK, { sessionId, db, runtime: fixture.runtime, workDir });
    expect(rerun).toMatchObject({ sessionId, created: false, status: "completed" });
    const history = fixture.server.requests[before]?.json.messages?.[1];
    expect(history).toEqual({
      role: "assistant",
      content: "research_agent failed: ProviderError: openai provider failed with HTTP 500: the model is on fire",
    });
    expect(rerun.result.versioned).toEqual(
      expect.arrayContaining(["literature review/review.v1.md", "paper/related work.v1.md"]),
    );
    expect(readFileSync(join(workDir, "literature review", "review.v1.md"), "utf8")).toContain(
      "Reliable agents [first]",
    );
    expect(readFileSync(join(workDir, "paper", "method.md"), "utf8")).toContain("[rerun]");
    expect(existsSync(join(workDir, "paper", "paper.md"))).toBe(true);
    expect((await describeSession(sessionId, { db })).record.status).toBe("idle");
  });
});

describe("a reply that does not follow the stage's schema", () => {
  it("is sent back with the problem, then fails that stage with InvalidModelOutputError, recording every reply", async () => {
    fixture = await startResearchFixture(
      researchModel({ override: (stage) => (stage === "review_paper" ? "Looks fine to me." : undefined) }),
    );
    const workDir = fixture.workDir();
    const error = await runResearch(TASK, { db: fixture.store.db, runtime: fixture.runtime, workDir }).catch(
      (caught: unknown) => caught,
    );

    expect(error).toBeInstanceOf(InvalidModelOutputError);
    expect(error).toMatchObject({ code: "invalid_model_output", reply: "Looks fine to me.", attempts: 3 });
    expect((error as Error).message).toMatch(/the reply is not JSON/);
    const nodes = await nodesOf(fixture.store.db, (error as { sessionId: string }).sessionId);
    const review = onlyCall(nodes, "review_paper");
    expect(review.metadata).toMatchObject({ status: "failed", error: { code: "invalid_model_output" } });
    // The first reply and its two retries (schemaRetries' default), each its own llm node with the problem recorded.
    const replies = nodes.filter((node) => node.role === "llm" && node.caller === review.id);
    expect(replies).toHaveLength(3);
    for (const reply of replies)
      expect(reply).toMatchObject({
        output: "Looks fine to me.",
        metadata: { status: "completed", output_error: expect.stringMatching(/not JSON/) as string },
      });
    expect(existsSync(join(workDir, "paper", "paper.md"))).toBe(true);
    expect(existsSync(join(workDir, "review"))).toBe(false);
    expect(fixture.server.requests.map(stageOf).slice(-3)).toEqual(["review_paper", "review_paper", "review_paper"]);
  });
});

describe("cancelling a run", () => {
  it("stops at the stage in flight, records it as cancelled, keeps the files and leaves the session idle", async () => {
    const controller = new AbortController();
    fixture = await startResearchFixture(
      researchModel({
        override: (stage) => {
          if (stage !== "propose_ideas") return undefined;
          controller.abort("the user pressed stop");
          return { delayMs: 2_000, reply: "1. Too late — never used" };
        },
      }),
    );
    const workDir = fixture.workDir();
    const error = await runResearch(TASK, {
      db: fixture.store.db,
      runtime: fixture.runtime,
      workDir,
      signal: controller.signal,
    }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(CancelledError);
    const sessionId = (error as { sessionId: string }).sessionId;
    const nodes = await nodesOf(fixture.store.db, sessionId);
    expect(onlyCall(nodes, "propose_ideas").metadata.status).toBe("cancelled");
    expect(onlyCall(nodes, "research_agent").metadata.status).toBe("cancelled");
    expect((await describeSession(sessionId, { db: fixture.store.db })).record.status).toBe("idle");
    expect(filesUnder(workDir)).toEqual(["literature review", "literature review/review.md"]);
  });
});
